package gd2

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// newTransport builds the HTTP transport for the TLS options. A CA bundle
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
	tr.TLSClientConfig = cfg
	return tr, nil
}
