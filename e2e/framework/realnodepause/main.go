// Command realnodepause is the pause container of the e2e suite's real
// node: the process each pod sandbox runs to hold the pod's namespaces. It
// waits for SIGTERM or SIGINT and exits; nothing else. The framework builds
// it static and imports it under containerd's sandbox_image name, since no
// image can be pulled on the test machines.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
