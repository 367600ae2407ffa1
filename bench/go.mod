module github.com/otelpfs/otelpfs/bench

go 1.26.0

require github.com/otelpfs/otelpfs v0.0.0

require github.com/DataDog/go-sqllexer v0.2.6

replace github.com/otelpfs/otelpfs => ../
