module example.com/invoicing

go 1.19
