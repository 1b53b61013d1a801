module portico.io/test/images/workload

go 1.24
