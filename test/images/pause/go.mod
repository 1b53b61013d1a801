module portico.io/test/images/pause

go 1.24
