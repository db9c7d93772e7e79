package framework

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// The real node's cluster DNS: the part of a cluster's DNS that pods of a
// GlusterCluster use, answered from the API server by the test process on
// the host's end of the veth pair (where the node's pods reach the host),
// so that the kubelet can give pods a nameserver (clusterDNS) as on any
// cluster. It answers A queries under cluster.local, as kube-dns and
// CoreDNS do for these shapes:
//
//	<service>.<ns>.svc            the ClusterIP, or a headless Service's pods
//	<hostname>.<subdomain>.<ns>.svc  the pod with that hostname and subdomain
//
// Anything else is NXDOMAIN (pods here reach nothing outside the cluster),
// AAAA and other types an empty answer. Names are read live, never cached.
const clusterDomain = "cluster.local"

// clusterDNS serves one real node's pods.
type clusterDNS struct {
	conn   net.PacketConn
	client kubernetes.Interface
	wg     sync.WaitGroup
}

func startClusterDNS(addr string, client kubernetes.Interface) (*clusterDNS, error) {
	conn, err := net.ListenPacket("udp4", net.JoinHostPort(addr, "53"))
	if err != nil {
		return nil, err
	}
	d := &clusterDNS{conn: conn, client: client}
	d.wg.Go(d.serve)
	return d, nil
}

func (d *clusterDNS) stop() {
	_ = d.conn.Close()
	d.wg.Wait()
}

func (d *clusterDNS) serve() {
	var handlers sync.WaitGroup
	defer handlers.Wait()
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		req := append([]byte(nil), buf[:n]...)
		handlers.Go(func() {
			if out := d.answer(req); out != nil {
				_, _ = d.conn.WriteTo(out, from)
			}
		})
	}
}

// answer builds the response to one query message, nil when it cannot be
// parsed.
func (d *clusterDNS) answer(req []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(req)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	resp := dnsmessage.Message{Header: dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}, Questions: []dnsmessage.Question{q}}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ips, known := d.resolve(ctx, name)
	switch {
	case !known:
		resp.RCode = dnsmessage.RCodeNameError
	case q.Type == dnsmessage.TypeA && q.Class == dnsmessage.ClassINET:
		for _, ip := range ips {
			resp.Answers = append(resp.Answers, dnsmessage.Resource{
				Header: dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 5},
				Body:   &dnsmessage.AResource{A: ip.As4()},
			})
		}
	}
	out, err := resp.Pack()
	if err != nil {
		return nil
	}
	return out
}

// resolve returns the IPv4 addresses of a cluster name and whether the
// name exists.
func (d *clusterDNS) resolve(ctx context.Context, name string) ([]netip.Addr, bool) {
	rest, ok := strings.CutSuffix(name, ".svc."+clusterDomain)
	if !ok {
		return nil, false
	}
	parts := strings.Split(rest, ".")
	switch len(parts) {
	case 2:
		svc, err := d.client.CoreV1().Services(parts[1]).Get(ctx, parts[0], metav1.GetOptions{})
		if err != nil {
			return nil, false
		}
		if ip, err := netip.ParseAddr(svc.Spec.ClusterIP); err == nil && ip.Is4() {
			return []netip.Addr{ip}, true
		}
		if len(svc.Spec.Selector) == 0 {
			return nil, true
		}
		pods, err := d.client.CoreV1().Pods(parts[1]).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(svc.Spec.Selector).String()})
		if err != nil {
			return nil, false
		}
		var ips []netip.Addr
		for _, p := range pods.Items {
			if ip, ok := podIPv4(&p); ok && (svc.Spec.PublishNotReadyAddresses || podIsReady(&p)) {
				ips = append(ips, ip)
			}
		}
		return ips, true
	case 3:
		pods, err := d.client.CoreV1().Pods(parts[2]).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, false
		}
		for _, p := range pods.Items {
			if p.Spec.Hostname == parts[0] && p.Spec.Subdomain == parts[1] && p.DeletionTimestamp == nil {
				if ip, ok := podIPv4(&p); ok {
					return []netip.Addr{ip}, true
				}
			}
		}
	}
	return nil, false
}

func podIPv4(p *corev1.Pod) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(p.Status.PodIP)
	return ip, err == nil && ip.Is4()
}

func podIsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
