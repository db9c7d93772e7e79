package sim

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"sync/atomic"
)

// Serving TLS, as GD2 does when cert-file and key-file are set: TLS only,
// at least 1.2, no client certificates asked for (fact sheet §1). The
// certificate is chosen per handshake by the SNI name, as every GD2 pod
// presents its own certificate on its own address while the simulator
// serves them all on one listener.

// CertSource returns the certificate the server presents to a client that
// asked for serverName ("" when the client sent no SNI, as for an IP
// address).
type CertSource func(serverName string) (*tls.Certificate, error)

// StaticCert serves one certificate whatever the name.
func StaticCert(certFile, keyFile string) (CertSource, error) {
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS key pair: %w", err)
	}
	return func(string) (*tls.Certificate, error) { return &pair, nil }, nil
}

// TLSStats counts what a TLS listener saw: completed handshakes (by SNI
// name), failed ones (the client refused the certificate, or spoke
// another protocol), and connections that began with plain HTTP.
type TLSStats struct {
	Handshakes atomic.Int64
	Failures   atomic.Int64
	PlainHTTP  atomic.Int64

	mu     sync.Mutex
	byName map[string]int
}

// HandshakesFor is the number of completed handshakes that asked for
// name.
func (s *TLSStats) HandshakesFor(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byName[name]
}

// TLSConfig is GD2's server configuration with certificates from src.
func TLSConfig(src CertSource, stats *TLSStats) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return src(hello.ServerName)
		},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if stats != nil {
				stats.Handshakes.Add(1)
				stats.mu.Lock()
				if stats.byName == nil {
					stats.byName = map[string]int{}
				}
				stats.byName[cs.ServerName]++
				stats.mu.Unlock()
			}
			return nil
		},
	}
}

// TLSListener serves TLS on ln, counting into stats. A connection that
// starts with plain HTTP is counted and answered by the TLS stack's
// refusal (Go's HTTP server writes a 400 and closes it).
func TLSListener(ln net.Listener, cfg *tls.Config, stats *TLSStats) net.Listener {
	return tls.NewListener(&sniffListener{Listener: ln, stats: stats}, cfg)
}

// HandshakeErrorLog is an http.Server ErrorLog that counts failed
// handshakes into stats (and forwards every line to w, if not nil).
func HandshakeErrorLog(stats *TLSStats, w io.Writer) *log.Logger {
	if w == nil {
		w = io.Discard
	}
	return log.New(&handshakeCounter{stats: stats, w: w}, "", 0)
}

type handshakeCounter struct {
	stats *TLSStats
	w     io.Writer
}

func (h *handshakeCounter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), "TLS handshake error") && h.stats != nil {
		h.stats.Failures.Add(1)
	}
	return h.w.Write(p)
}

type sniffListener struct {
	net.Listener
	stats *TLSStats
}

func (l *sniffListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: c, r: bufio.NewReader(c), stats: l.stats}, nil
}

// sniffConn looks at the first byte a client sends: a TLS handshake
// record starts with 0x16; an HTTP request with a method's letter.
type sniffConn struct {
	net.Conn
	r       *bufio.Reader
	stats   *TLSStats
	checked bool
}

func (c *sniffConn) Read(p []byte) (int, error) {
	if !c.checked {
		c.checked = true
		if b, err := c.r.Peek(1); err == nil && b[0] != 0x16 && c.stats != nil {
			c.stats.PlainHTTP.Add(1)
		} else if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
	}
	return c.r.Read(p)
}
