package gd2

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds a call whose context has no deadline, and every
// single HTTP attempt. It matches GD2's server write timeout: a handler that
// runs longer cannot deliver its response anyway.
const DefaultTimeout = 30 * time.Second

// DefaultUser is the only JWT issuer GD2 knows.
const DefaultUser = "glustercli"

// Size limits for bodies the client reads. GD2 answers are small; the caps
// keep a misbehaving server from exhausting memory.
const (
	maxResponseBytes = 32 << 20
	maxErrorBodyText = 512
)

// Options configures a Client. Only Endpoint is required.
type Options struct {
	// Endpoint is GD2's REST base URL, e.g. https://gd2.example:24007.
	Endpoint string
	// User is the JWT issuer claim; empty means DefaultUser.
	User string
	// Secret is the shared GD2 auth secret (the 64-hex-char content of GD2's
	// auth file). Empty disables the Authorization header.
	Secret string
	// CACert is a PEM bundle that replaces the system roots for https.
	CACert []byte
	// CACertFile is read into CACert when CACert is empty.
	CACertFile string
	// InsecureSkipVerify disables server certificate checks. Only for tests.
	InsecureSkipVerify bool
	// ServerName, when set, is the name the server's certificate is
	// checked against (and sent as SNI) instead of the URL's host: for an
	// endpoint that is a tunnel or proxy to a server known by another
	// name.
	ServerName string
	// Timeout replaces DefaultTimeout.
	Timeout time.Duration
	// Observer receives one report per HTTP attempt; nil disables reports.
	Observer Observer
	// DialAddress, when set, is the host:port every connection dials, while
	// the request URL, the Host header, the token and the TLS server name
	// (certificate check) stay those of Endpoint, like curl's --connect-to.
	// It binds a client to one GD2 node behind a shared name: a
	// replace-brick must be served by the node that holds the source brick
	// (GD2 sizes the new brick from the source path on the serving node),
	// so the operator dials that node's pod address while still presenting
	// the Service name its certificate is issued for. Proxies are not used.
	DialAddress string
	// HTTPClient replaces the client built from the TLS options; it cannot be
	// combined with CACert, CACertFile, InsecureSkipVerify or DialAddress.
	HTTPClient *http.Client
	// Retry replaces DefaultRetryPolicy.
	Retry *RetryPolicy
	// Now replaces time.Now when minting tokens (tests).
	Now func() time.Time
}

// Client talks to one GD2 endpoint. It is safe for concurrent use.
type Client struct {
	// peerAdds makes AddPeer one at a time: GD2 (2019) breaks when two
	// peers are added to a pool at the same moment.
	peerAdds sync.Mutex
	base     *url.URL
	dialAddr string
	user     string
	secret   string
	http     *http.Client
	timeout  time.Duration
	observer Observer
	retry    RetryPolicy
	now      func() time.Time
	// hedgeAfter says when a read that has not answered is sent again
	// beside the first (deadlines.go); tests shorten it.
	hedgeAfter func(Operation) time.Duration
}

// New validates opts and builds a Client. It does not contact GD2.
func New(opts Options) (*Client, error) {
	base, err := parseEndpoint(opts.Endpoint)
	if err != nil {
		return nil, err
	}
	if err := checkDialAddress(opts.DialAddress); err != nil {
		return nil, err
	}
	hc := opts.HTTPClient
	if hc != nil {
		if len(opts.CACert) > 0 || opts.CACertFile != "" || opts.InsecureSkipVerify || opts.ServerName != "" {
			return nil, errors.New("gd2: HTTPClient cannot be combined with TLS options")
		}
		if opts.DialAddress != "" {
			return nil, errors.New("gd2: HTTPClient cannot be combined with DialAddress")
		}
	} else {
		tr, err := newTransport(opts)
		if err != nil {
			return nil, err
		}
		hc = &http.Client{Transport: tr}
	}
	c := &Client{
		base:       base,
		dialAddr:   opts.DialAddress,
		user:       opts.User,
		secret:     opts.Secret,
		http:       hc,
		timeout:    opts.Timeout,
		observer:   opts.Observer,
		retry:      DefaultRetryPolicy,
		now:        opts.Now,
		hedgeAfter: hedgeAfter,
	}
	if c.user == "" {
		c.user = DefaultUser
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	if c.observer == nil {
		c.observer = nopObserver{}
	}
	if opts.Retry != nil {
		c.retry = opts.Retry.normalised()
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// Endpoint returns the base URL the client talks to.
func (c *Client) Endpoint() string { return c.base.String() }

// DialAddress returns the host:port the client connects to instead of
// Endpoint's, or "" when it dials Endpoint itself.
func (c *Client) DialAddress() string { return c.dialAddr }

func checkDialAddress(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("gd2: dial address %q: %w", addr, err)
	}
	if host == "" || port == "" {
		return fmt.Errorf("gd2: dial address %q: want host:port", addr)
	}
	return nil
}

func parseEndpoint(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("gd2: endpoint is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("gd2: parse endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("gd2: endpoint %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("gd2: endpoint %q: missing host", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	return u, nil
}

// request describes one client call.
type request struct {
	op     Operation
	method string
	// path is the GD2 path (/v1/..., /ping), unescaped. It is also what the
	// token's qsh claim covers. Build it with apiPath.
	path    string
	pathErr error // from apiPath; reported before any I/O
	query   url.Values
	body    any  // JSON-encoded when non-nil
	noAuth  bool // GD2 exempts /ping and /endpoints from auth
	// out receives the decoded 2xx body; nil ignores it.
	out any
	// allowEmpty accepts an empty 2xx body even when out is set (lists that
	// may legitimately be absent).
	allowEmpty bool
}

// do runs req with deadline, retries and observation.
func (c *Client) do(ctx context.Context, req request) error {
	if req.pathErr != nil {
		return fmt.Errorf("gd2 %s: %w", req.op, req.pathErr)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	var payload []byte
	if req.body != nil {
		var err error
		if payload, err = json.Marshal(req.body); err != nil {
			return fmt.Errorf("gd2 %s: encode request: %w", req.op, err)
		}
	}
	for attempt := 1; ; attempt++ {
		err := c.attempt(ctx, req, payload)
		if err == nil {
			return nil
		}
		if eo, ok := c.observer.(ErrorObserver); ok {
			eo.ObserveError(req.op, ClassOf(err))
		}
		if attempt >= c.retry.MaxAttempts || !retryable(req.method, err) {
			return err
		}
		if werr := c.retry.wait(ctx, attempt); werr != nil {
			return fmt.Errorf("gd2 %s: retry abandoned: %w (last error: %w)", req.op, werr, err)
		}
	}
}

// attempt performs one attempt of req: for a GET, an exchange hedged by a
// second after hedgeAfter; otherwise one exchange, bounded by
// attemptTimeout. It decodes the answer once, from the exchange that won.
func (c *Client) attempt(ctx context.Context, req request, payload []byte) error {
	var data []byte
	var err error
	if req.method == http.MethodGet {
		data, err = c.hedged(ctx, req, c.hedgeAfter(req.op))
	} else {
		data, err = c.exchange(ctx, req, payload)
	}
	if err != nil {
		return err
	}
	if err := decodeBody(data, req.out, req.allowEmpty); err != nil {
		return fmt.Errorf("gd2 %s (%s %s): %w: %w", req.op, req.method, req.path, ErrBadResponse, err)
	}
	return nil
}

// exchange performs exactly one HTTP exchange and returns the 2xx body.
func (c *Client) exchange(ctx context.Context, req request, payload []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.attemptTimeout(req.method, req.op))
	defer cancel()

	u := *c.base
	u.Path = c.base.Path + req.path
	u.RawQuery = req.query.Encode()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("gd2 %s: build request: %w", req.op, err)
	}
	hreq.Header.Set("Accept", "application/json")
	if payload != nil {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if c.secret != "" && !req.noAuth {
		tok, err := c.token(req.method, req.path)
		if err != nil {
			return nil, fmt.Errorf("gd2 %s: %w", req.op, err)
		}
		hreq.Header.Set("Authorization", "bearer "+tok)
	}

	start := time.Now()
	resp, err := c.http.Do(hreq)
	if err != nil {
		c.observer.ObserveRequest(req.op, 0, time.Since(start))
		return nil, &noResponseError{op: req.op, method: req.method, path: req.path, err: err}
	}
	data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	c.observer.ObserveRequest(req.op, resp.StatusCode, time.Since(start))
	if rerr != nil {
		return nil, &noResponseError{op: req.op, method: req.method, path: req.path, err: rerr}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, decodeError(req.op, req.method, req.path, resp.StatusCode, data)
	}
	return data, nil
}

// noResponseError is a failed exchange: no status code to classify.
type noResponseError struct {
	op           Operation
	method, path string
	err          error
}

func (e *noResponseError) Error() string {
	return fmt.Sprintf("gd2 %s (%s %s): %v", e.op, e.method, e.path, e.err)
}

func (e *noResponseError) Unwrap() []error { return []error{ErrNoResponse, e.err} }

// ErrInvalidArgument is returned, without contacting GD2, for an identifier
// that cannot name anything (empty, or one that would change the route). An
// empty peer ID must not turn into a 404 that reads as "already deleted".
var ErrInvalidArgument = errors.New("gd2: invalid argument")

// apiPath joins /v1 and the segments, refusing segments that would route
// somewhere else.
func apiPath(segments ...string) (string, error) {
	var b strings.Builder
	b.WriteString("/v1")
	for _, s := range segments {
		if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/?#") {
			return "", fmt.Errorf("%w: path segment %q", ErrInvalidArgument, s)
		}
		b.WriteString("/")
		b.WriteString(s)
	}
	return b.String(), nil
}

// apiPathTail is apiPath plus a tail that may contain slashes (a device path
// such as dev/sdb).
// A leading slash on the tail is dropped: GD2 routes devices by the path
// without it.
func apiPathTail(tail string, segments ...string) (string, error) {
	p, err := apiPath(segments...)
	if err != nil {
		return "", err
	}
	tail = strings.TrimPrefix(tail, "/")
	for _, s := range strings.Split(tail, "/") {
		if _, err := apiPath(s); err != nil {
			return "", fmt.Errorf("%w: path %q", ErrInvalidArgument, tail)
		}
	}
	return p + "/" + tail, nil
}
