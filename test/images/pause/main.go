// Command pause is the test cluster's pod sandbox (containerd's sandbox_image, registry.k8s.io/pause:3.10):
// it holds the pod's namespaces open by doing nothing until SIGINT or SIGTERM, then exits 0. As PID 1 of
// pods that share a process namespace it also reaps orphaned children, so no zombies pile up.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// PID 1 gets no default signal dispositions from the kernel, so SIGTERM only stops it when handled.
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range signals {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: shutting down, got %v\n", sig)
		os.Exit(0)
	}
}

// reap collects every child that has exited. Several exits can arrive as a single SIGCHLD, so it loops
// until none is left waiting.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
