package gd2

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// newTransport builds the HTTP transport for the TLS options and
// DialAddress. A CA bundle
// replaces the system roots, as GD2's own client does; certificate checks
// are skipped only when InsecureSkipVerify is set explicitly.
func newTransport(opts Options) (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	pem := opts.CACert
	if len(pem) == 0 && opts.CACertFile != "" {
		var err error
		if pem, err = os.ReadFile(opts.CACertFile); err != nil {
			return nil, fmt.Errorf("gd2: read CA bundle: %w", err)
		}
	}
	if len(pem) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errors.New("gd2: CA bundle contains no PEM certificates")
		}
		cfg.RootCAs = pool
	}
	cfg.InsecureSkipVerify = opts.InsecureSkipVerify
	cfg.ServerName = opts.ServerName
	tr.TLSClientConfig = cfg
	if opts.DialAddress != "" {
		// The transport still derives the Host header and the TLS server
		// name from the request URL; only the TCP destination changes.
		dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		addr := opts.DialAddress
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, addr)
		}
		tr.Proxy = nil
	}
	return tr, nil
}
