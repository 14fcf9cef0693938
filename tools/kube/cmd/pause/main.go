// Command pause is the pod sandbox's process (containerd's sandbox_image): it
// holds the pod's namespaces, reaps orphaned children (it is PID 1 of the pod
// when the pod shares its process namespace) and exits on SIGTERM or SIGINT.
// A few lines of Go instead of registry.k8s.io/pause, which cannot be pulled
// where there is no registry.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
