//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mysqlpfs

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed tells whether c's peer has closed the connection (or reset
// it), without reading from it: a non-blocking MSG_PEEK of one byte reads
// end of file. Data waiting (a client that sent its next command already)
// is not a close.
func peerClosed(c net.Conn) bool {
	if tc, ok := c.(*trackedConn); ok {
		c = tc.Conn
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var buf [1]byte
	err = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default: // ECONNRESET and the like
			closed = true
		}
		return true
	})
	// An error is a connection closed on this side (Server.Close), whose
	// statements end anyway.
	return err == nil && closed
}
