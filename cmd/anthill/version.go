package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
)

// version is set at link time: -ldflags "-X main.version=v0.1.0".
var version = "dev"

func init() {
	register("version", command{summary: "print the anthill version", run: runVersion})
}

func runVersion(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Printf("anthill %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
