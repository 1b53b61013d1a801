module portico.io/test/images/workload

go 1.24

require github.com/pires/go-proxyproto v0.8.1
