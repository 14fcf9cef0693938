// Command cri-clean stops and removes every pod sandbox of one container
// runtime, through its CRI socket, as the kubelet would: the runtime then
// tears down each pod's network (CNI DEL: veth, IP lease, NAT rules) and its
// network namespace, which killing the processes would leave behind.
// scripts/kube-cluster.sh stop runs it after stopping the kubelet.
//
//	cri-clean unix:///run/cgu-kube-<id>/containerd.sock
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	cri "k8s.io/cri-client/pkg"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cri-clean unix:///path/to/cri.sock")
		os.Exit(2)
	}
	runtime, err := cri.NewRemoteRuntimeService(os.Args[1], 10*time.Second, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cri-clean:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sandboxes, err := runtime.ListPodSandbox(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cri-clean:", err)
		os.Exit(1)
	}
	failed := 0
	for _, sandbox := range sandboxes {
		name := sandbox.GetMetadata().GetNamespace() + "/" + sandbox.GetMetadata().GetName()
		if err := runtime.StopPodSandbox(ctx, sandbox.Id); err != nil {
			fmt.Fprintf(os.Stderr, "cri-clean: stopping %s: %v\n", name, err)
		}
		if err := runtime.RemovePodSandbox(ctx, sandbox.Id); err != nil {
			fmt.Fprintf(os.Stderr, "cri-clean: removing %s: %v\n", name, err)
			failed++
		}
	}
	fmt.Printf("removed %d pod sandboxes\n", len(sandboxes)-failed)
	if failed > 0 {
		os.Exit(1)
	}
}
