//go:build !linux

package main

import "errors"

func startPinned(cpu int, start func() error) error {
	return errors.New("-cpu: pinning is implemented on Linux only")
}

func allowedCPUs(pid int) (string, error) { return "", errors.New("not on Linux") }
