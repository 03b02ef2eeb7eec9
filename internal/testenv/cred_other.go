//go:build !unix

package testenv

import "syscall"

func newSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func setCredential(*syscall.SysProcAttr, uint32, uint32) {}
