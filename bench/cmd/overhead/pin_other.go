//go:build !linux

package main

import "errors"

var errNoPinning = errors.New("-cpu: pinning is implemented on Linux only")

func startPinned(cpu int, start func() error) error { return errNoPinning }

func allowedCPUs(pid int) (string, error) { return "", errNoPinning }

func firstCPU() (int, error) { return 0, errNoPinning }
