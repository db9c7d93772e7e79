package effects

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

// fxServer is one address of a pool: it answers every request with its
// name and the body it received, and counts what it served.
type fxServer struct {
	name   string
	ln     net.Listener
	srv    *http.Server
	served atomic.Int32
}

func startFxServer(t *testing.T, name, addr string) *fxServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	s := &fxServer{name: name, ln: ln}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.served.Add(1)
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s:%s", s.name, b)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(s.stop)
	return s
}

func (s *fxServer) stop() { _ = s.srv.Close() }

func (s *fxServer) url() string { return "http://" + s.ln.Addr().String() }

// closedAddress is an address nothing listens on: connecting is refused.
func closedAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

func post(t *testing.T, c *http.Client, body string) (string, error) {
	t.Helper()
	resp, err := c.Post("http://placeholder/v1/peers", "text/plain", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestFailoverTransportSticksToAnAnsweringAddressAndMovesOnInOrder(t *testing.T) {
	b := startFxServer(t, "b", "127.0.0.1:0")
	c := startFxServer(t, "c", "127.0.0.1:0")
	var switches []string
	var mu sync.Mutex
	tr, err := newFailoverTransport([]string{closedAddress(t), b.url(), c.url()}, func(from, to string, _ error) {
		mu.Lock()
		defer mu.Unlock()
		switches = append(switches, from+">"+to)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}

	// The first address refuses: the request, body included, goes to the
	// second, which then keeps every request.
	for i := range 3 {
		got, err := post(t, client, "req"+strconv.Itoa(i))
		if err != nil || got != "b:req"+strconv.Itoa(i) {
			t.Fatalf("request %d: %q, %v; want it served by b with its body", i, got, err)
		}
	}
	if b.served.Load() != 3 || c.served.Load() != 0 {
		t.Fatalf("served b=%d c=%d, want b=3 c=0", b.served.Load(), c.served.Load())
	}
	// b stops answering: the next address takes over and keeps it. (A
	// read: a POST on the connection b dropped fails once, as it may have
	// arrived; see the next test.)
	b.stop()
	for i := range 2 {
		resp, err := client.Get("http://placeholder/v1/peers")
		if err != nil {
			t.Fatalf("after b stopped, request %d: %v; want c", i, err)
		}
		got, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if string(got) != "c:" {
			t.Fatalf("after b stopped, request %d answered %q; want c", i, got)
		}
	}
	if c.served.Load() != 2 {
		t.Fatalf("c served %d, want 2", c.served.Load())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(switches) != 2 || !strings.HasSuffix(switches[0], ">"+b.ln.Addr().String()) || !strings.HasSuffix(switches[1], ">"+c.ln.Addr().String()) {
		t.Errorf("switches %q, want first to b, then to c", switches)
	}
}

func TestFailoverTransportNeverResendsARequestThatMayHaveArrived(t *testing.T) {
	// The first address accepts the connection and drops it without an
	// answer: the request may have reached GD2, so it must not be sent to
	// the next address; the next request goes there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dropped atomic.Int32
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			dropped.Add(1)
			buf := make([]byte, 4096)
			_, _ = conn.Read(buf)
			_ = conn.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	b := startFxServer(t, "b", "127.0.0.1:0")
	tr, err := newFailoverTransport([]string{"http://" + ln.Addr().String(), b.url()}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	if got, err := post(t, client, "create"); err == nil {
		t.Fatalf("a dropped request answered %q; want its error", got)
	}
	if b.served.Load() != 0 {
		t.Fatalf("the dropped request was resent to b")
	}
	if got, err := post(t, client, "next"); err != nil || got != "b:next" {
		t.Fatalf("next request: %q, %v; want b", got, err)
	}
	if dropped.Load() == 0 {
		t.Fatal("the first address was never tried")
	}
}

func TestFailoverTransportReportsTheLastErrorWhenNoAddressAnswers(t *testing.T) {
	tr, err := newFailoverTransport([]string{closedAddress(t), closedAddress(t)}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = post(t, &http.Client{Transport: tr}, "x")
	if !isDialError(err) {
		t.Fatalf("error %v, want a dial error", err)
	}
}

// TestGD2ClientsTalkToAnExternalPoolsAddresses checks the client For builds
// for an external cluster: it signs requests with the cluster's secret and
// reaches the pool at spec.external.port on the listed addresses, past one
// that refuses (127.0.0.1 and 127.0.0.2 are both loopback on Linux).
func TestGD2ClientsTalkToAnExternalPoolsAddresses(t *testing.T) {
	b := startFxServer(t, "b", "127.0.0.2:0")
	_, port, _ := net.SplitHostPort(b.ln.Addr().String())
	if ln, err := net.Listen("tcp", "127.0.0.1:"+port); err == nil {
		_ = ln.Close() // now nothing listens at 127.0.0.1:port
	} else {
		t.Skipf("127.0.0.1:%s is taken", port)
	}
	p, _ := strconv.Atoi(port)
	c := fixtures.External("gc", int32(p), fixtures.ExternalNode("127.0.0.1", "a"), fixtures.ExternalNode("127.0.0.2", "b"))
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "pool-secret"}}
	kube := k8sfake.NewClientset(&corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pool-secret", Namespace: fixtures.Namespace},
		Data:       map[string][]byte{objects.AuthSecretKey: []byte(strings.Repeat("ab", 32))},
	})
	g := &GD2Clients{Secrets: kube.CoreV1()}
	gc, err := g.For(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := gc.Ping(context.Background()); err != nil {
		t.Fatalf("ping: %v", err)
	}
	if b.served.Load() != 1 {
		t.Fatalf("127.0.0.2 served %d requests, want 1", b.served.Load())
	}
	again, err := g.For(context.Background(), c)
	if err != nil || again != gc {
		t.Fatalf("For with an unchanged spec built a new client (%v)", err)
	}
	c.Spec.External.Nodes = c.Spec.External.Nodes[1:]
	changed, err := g.For(context.Background(), c)
	if err != nil || changed == gc {
		t.Fatalf("For after an address change reused the old client (%v)", err)
	}
	if err := changed.Ping(context.Background()); err != nil {
		t.Fatalf("ping after the change: %v", err)
	}
}
