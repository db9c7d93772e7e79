// Command realnodepause is the pause container of the e2e suite's real
// node: the process each pod sandbox runs to hold the pod's namespaces. It
// waits for SIGTERM or SIGINT and exits. Like Kubernetes' own pause, it
// reaps: in a pod that shares its process namespace it is PID 1, and the
// processes the containers leave behind (GD2's bricks and helper mounts
// daemonize) become its children. The framework builds it static and
// imports it under containerd's sandbox_image name, since no image can be
// pulled on the test machines.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range c {
		if s != syscall.SIGCHLD {
			return
		}
		// Signals coalesce: reap every child that has exited.
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
