module github.com/otelpfs/otelpfs

go 1.26.0
