// A named-pipe net.Conn for grpc-go from the standard syscall package only
// (go-winio is not packaged in Debian, and Debian's x/sys has no windows
// package).
//
// The pipe is opened with FILE_FLAG_OVERLAPPED and every ReadFile/WriteFile
// gets its own OVERLAPPED, waited on with GetOverlappedResult. A handle opened
// for synchronous I/O would deadlock: grpc-go reads and writes at the same
// time, and Windows serializes synchronous I/O on one file object, so the
// first pending read would block every write. Reads are serialized among
// themselves, writes among themselves (grpc-go has one reader goroutine and one
// writer, loopy), so one event per direction serves every call.
//
// Flags as go-winio's DialPipe: GENERIC_READ|GENERIC_WRITE, OPEN_EXISTING,
// FILE_FLAG_OVERLAPPED|SECURITY_SQOS_PRESENT|SECURITY_ANONYMOUS; a busy pipe
// (every instance taken) is retried until the context ends.
package main

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	fileFlagOverlapped  = 0x40000000
	securitySqosPresent = 0x00100000
	securityAnonymous   = 0x00000000
	errorPipeBusy       = syscall.Errno(231)
	errorPipeNotConn    = syscall.Errno(233)
	errorBrokenPipe     = syscall.Errno(109)
	errorNoData         = syscall.Errno(232)
	errorIOPending      = syscall.Errno(997)
	errorOpAborted      = syscall.Errno(995)
	errorMoreData       = syscall.Errno(234)
)

var (
	kernel32                = syscall.NewLazyDLL("kernel32.dll")
	procCreateEventW        = kernel32.NewProc("CreateEventW")
	procGetOverlappedResult = kernel32.NewProc("GetOverlappedResult")
	procQPC                 = kernel32.NewProc("QueryPerformanceCounter")
	procQPF                 = kernel32.NewProc("QueryPerformanceFrequency")
)

// qpcFreq and qpcNow: the clock of every timing here. Go's own clock on
// Windows reads the interrupt time in the shared user data page, which Wine
// refreshes only now and then; QueryPerformanceCounter is exact under Wine.
var qpcFreq int64

func qpcNow() int64 {
	var v int64
	procQPC.Call(uintptr(unsafe.Pointer(&v)))
	return v
}

func qpcInit() {
	procQPF.Call(uintptr(unsafe.Pointer(&qpcFreq)))
	if qpcFreq == 0 {
		qpcFreq = 1
	}
}

func qpcSecs(d int64) float64 { return float64(d) / float64(qpcFreq) }

func newEvent() (syscall.Handle, error) {
	h, _, err := procCreateEventW.Call(0, 1, 0, 0) // manual reset, not signaled
	if h == 0 {
		return 0, err
	}
	return syscall.Handle(h), nil
}

type pipeAddr string

func (a pipeAddr) Network() string { return "pipe" }
func (a pipeAddr) String() string  { return string(a) }

type pipeConn struct {
	h      syscall.Handle
	name   string
	rmu    sync.Mutex
	wmu    sync.Mutex
	rev    syscall.Handle
	wev    syscall.Handle
	closed int32
	once   sync.Once
}

// dialPipe opens \\.\pipe\NAME, retrying while every instance is busy.
func dialPipe(ctx context.Context, path string) (net.Conn, error) {
	p, err := syscall.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	for {
		h, err := syscall.CreateFile(p, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
			syscall.OPEN_EXISTING, fileFlagOverlapped|securitySqosPresent|securityAnonymous, 0)
		if err == nil {
			c := &pipeConn{h: h, name: path}
			if c.rev, err = newEvent(); err == nil {
				c.wev, err = newEvent()
			}
			if err != nil {
				c.release()
				return nil, err
			}
			return c, nil
		}
		if err != errorPipeBusy {
			return nil, &net.OpError{Op: "dial", Net: "pipe", Addr: pipeAddr(path), Err: err}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

func (c *pipeConn) release() {
	if c.rev != 0 {
		syscall.CloseHandle(c.rev)
	}
	if c.wev != 0 {
		syscall.CloseHandle(c.wev)
	}
	syscall.CloseHandle(c.h)
}

// io does one overlapped ReadFile or WriteFile and waits for it.
func (c *pipeConn) io(write bool, b []byte, ev syscall.Handle) (int, error) {
	if atomic.LoadInt32(&c.closed) != 0 {
		return 0, net.ErrClosed
	}
	var ov syscall.Overlapped
	ov.HEvent = ev
	var n uint32
	var err error
	if write {
		err = syscall.WriteFile(c.h, b, &n, &ov)
	} else {
		err = syscall.ReadFile(c.h, b, &n, &ov)
	}
	if err == errorIOPending {
		r, _, e := procGetOverlappedResult.Call(uintptr(c.h), uintptr(unsafe.Pointer(&ov)),
			uintptr(unsafe.Pointer(&n)), 1)
		if r != 0 {
			err = nil
		} else {
			err = e
		}
	}
	if err == errorMoreData { // a message-mode pipe: the rest follows in the next read
		err = nil
	}
	return int(n), err
}

func (c *pipeConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	c.rmu.Lock()
	defer c.rmu.Unlock()
	n, err := c.io(false, b, c.rev)
	switch err {
	case nil:
		if n == 0 {
			return 0, io.EOF
		}
	case errorBrokenPipe, errorPipeNotConn, errorNoData:
		return n, io.EOF
	case errorOpAborted:
		return n, net.ErrClosed
	}
	return n, err
}

func (c *pipeConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	done := 0
	for done < len(b) {
		n, err := c.io(true, b[done:], c.wev)
		done += n
		if err != nil {
			if err == errorBrokenPipe || err == errorNoData || err == errorPipeNotConn {
				err = io.ErrClosedPipe
			}
			return done, err
		}
	}
	return done, nil
}

// Close cancels what is pending (repeatedly, until the reader and the writer
// have let go), then closes the handle.
func (c *pipeConn) Close() error {
	c.once.Do(func() {
		atomic.StoreInt32(&c.closed, 1)
		for !c.rmu.TryLock() {
			syscall.CancelIoEx(c.h, nil)
			time.Sleep(100 * time.Microsecond)
		}
		for !c.wmu.TryLock() {
			syscall.CancelIoEx(c.h, nil)
			time.Sleep(100 * time.Microsecond)
		}
		c.release()
		c.wmu.Unlock()
		c.rmu.Unlock()
	})
	return nil
}

func (c *pipeConn) LocalAddr() net.Addr  { return pipeAddr(c.name) }
func (c *pipeConn) RemoteAddr() net.Addr { return pipeAddr(c.name) }

// Deadlines are not used by grpc-go's HTTP/2 client over an insecure
// connection; they are accepted and ignored.
func (c *pipeConn) SetDeadline(t time.Time) error      { return nil }
func (c *pipeConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *pipeConn) SetWriteDeadline(t time.Time) error { return nil }
