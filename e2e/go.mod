module github.com/otelpfs/otelpfs/e2e

go 1.26.0

require github.com/otelpfs/otelpfs v0.0.0

replace github.com/otelpfs/otelpfs => ../
