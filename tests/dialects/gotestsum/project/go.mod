module example.com/dialect

go 1.19
