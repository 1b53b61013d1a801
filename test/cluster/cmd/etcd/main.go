// Command etcd is the stock etcd server, built from the module proxy at the version kube-apiserver requires.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
