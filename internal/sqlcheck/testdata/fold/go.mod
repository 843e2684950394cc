module example.com/fold

go 1.22
