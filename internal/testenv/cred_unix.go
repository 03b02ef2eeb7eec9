//go:build unix

package testenv

import "syscall"

func newSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

func setCredential(a *syscall.SysProcAttr, uid, gid uint32) {
	a.Credential = &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: false, Groups: []uint32{}}
}
