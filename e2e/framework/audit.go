package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The API server's audit log, reduced to what the RBAC usage check needs.
//
// The operator authenticates with its own client certificate
// (operatorImpersonator) and impersonates its service account. The API
// server evaluates the audit policy before impersonation, on the
// authenticated user, so that certificate's name is what the policy
// selects; the recorder then keeps only the events whose impersonated user
// is the service account. Events arrive in batches over a webhook served
// by the test process and are folded into one counter per request shape,
// so memory stays small however long the suite runs.

// operatorImpersonator is the user of the operator's client certificate:
// it may impersonate (system:masters) and does nothing else.
const operatorImpersonator = "anthill-test-operator"

// auditFlushParam marks the request Flush sends: when the recorder sees
// it, every event the API server buffered before it has arrived.
const auditFlushParam = "anthill-audit-flush"

// auditNamesPerRequest bounds the object names kept per request shape; the
// names are there to match rules with resourceNames.
const auditNamesPerRequest = 32

// Request is the shape of one API request as RBAC sees it. Namespace is
// empty for a cluster-scoped request (or a list across all namespaces).
type Request struct {
	Verb, Group, Resource, Subresource, Namespace string
	// Streamed marks the list an informer makes as a watch that sends
	// the initial objects first (sendInitialEvents): the API server
	// authorizes it as a watch, but it stands for the list the informer
	// makes instead wherever the server cannot stream lists, so it
	// counts as a use of list too.
	Streamed bool
}

func (r Request) String() string {
	res := r.Resource
	if r.Subresource != "" {
		res += "/" + r.Subresource
	}
	g := r.Group
	if g == "" {
		g = "core"
	}
	scope := "cluster"
	if r.Namespace != "" {
		scope = "namespace " + r.Namespace
	}
	verb := r.Verb
	if r.Streamed {
		verb = "list (streamed, as a watch)"
	}
	return fmt.Sprintf("%s %s/%s (%s)", verb, g, res, scope)
}

// RequestUse is what the recorder knows of one Request.
type RequestUse struct {
	// Allowed and Denied count requests (a watch counts once).
	Allowed, Denied int
	// FirstTest is the test that made the first allowed request (or the
	// first denied one, while none was allowed), FirstAt when.
	FirstTest string
	FirstAt   time.Time
	// Names holds up to auditNamesPerRequest object names seen in allowed
	// requests; NamesTruncated says more were seen.
	Names          map[string]bool
	NamesTruncated bool
}

// AuditRecorder receives the API server's audit webhook and aggregates the
// operator's requests.
type AuditRecorder struct {
	user string // the service account whose requests count

	mu       sync.Mutex
	uses     map[Request]*RequestUse
	nsTest   map[string]string
	timeline []testMark
	flushes  map[string]bool
	events   int

	ln  net.Listener
	srv *http.Server
}

type testMark struct {
	at   time.Time
	test string
}

// NewAuditRecorder records the requests made as user (a service account's
// user name).
func NewAuditRecorder(user string) *AuditRecorder {
	return &AuditRecorder{user: user, uses: map[Request]*RequestUse{}, nsTest: map[string]string{}, flushes: map[string]bool{}}
}

// auditEvent is the part of an audit.k8s.io/v1 Event the recorder reads.
type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

type auditEventList struct {
	Items []auditEvent `json:"items"`
}

// ServeHTTP takes one batch of the audit webhook.
func (a *AuditRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var list auditEventList
	if err := json.NewDecoder(r.Body).Decode(&list); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for i := range list.Items {
		a.add(&list.Items[i])
	}
	w.WriteHeader(http.StatusOK)
}

func (a *AuditRecorder) add(e *auditEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events++
	if i := strings.Index(e.RequestURI, auditFlushParam+"="); i >= 0 {
		a.flushes[e.RequestURI[i+len(auditFlushParam)+1:]] = true
		return
	}
	user := e.User.Username
	if e.ImpersonatedUser != nil {
		user = e.ImpersonatedUser.Username
	}
	if user != a.user || e.ObjectRef == nil {
		return // another identity, or a non-resource URL (discovery, /version)
	}
	// A request is counted once: at ResponseComplete, except a watch,
	// which is counted when its response starts (it completes when the
	// watch ends, or at ResponseComplete only when it was refused).
	code := 0
	if e.ResponseStatus != nil {
		code = e.ResponseStatus.Code
	}
	switch {
	case e.Stage == "ResponseStarted" && e.Verb != "watch":
		return
	case e.Stage == "ResponseComplete" && e.Verb == "watch" && code < 300:
		return
	}
	req := Request{Verb: e.Verb, Group: e.ObjectRef.APIGroup, Resource: e.ObjectRef.Resource,
		Subresource: e.ObjectRef.Subresource, Namespace: e.ObjectRef.Namespace}
	denied := code == http.StatusForbidden || code == http.StatusUnauthorized
	a.count(req, e, denied)
	if req.Verb == "watch" && strings.Contains(e.RequestURI, "sendInitialEvents=true") {
		req.Verb, req.Streamed = "list", true
		a.count(req, e, denied)
	}
}

func (a *AuditRecorder) count(req Request, e *auditEvent, denied bool) {
	u := a.uses[req]
	if u == nil {
		u = &RequestUse{Names: map[string]bool{}}
		a.uses[req] = u
	}
	if denied {
		u.Denied++
	} else {
		u.Allowed++
		if n := e.ObjectRef.Name; n != "" {
			u.addName(n)
		}
	}
	at := e.RequestReceivedTimestamp
	// The first allowed request names the test; a denied one does only
	// until an allowed one is seen.
	if u.FirstTest == "" || (!denied && (u.Allowed == 1 || at.Before(u.FirstAt))) {
		u.FirstTest, u.FirstAt = a.testAt(e.ObjectRef.Namespace, at), at
	}
}

// testAt names the test a request belongs to: the one whose namespace it
// touched, or else the last test that began (ControlPlane.Namespace) before
// it was received; "TestMain" before any test.
func (a *AuditRecorder) testAt(ns string, at time.Time) string {
	if t, ok := a.nsTest[ns]; ok {
		return t
	}
	i := sort.Search(len(a.timeline), func(i int) bool { return a.timeline[i].at.After(at) })
	if i == 0 {
		return "TestMain"
	}
	return a.timeline[i-1].test
}

// TestBegins notes that test begins now and owns namespace ns.
func (a *AuditRecorder) TestBegins(test, ns string, at time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ns != "" {
		a.nsTest[ns] = test
	}
	if n := len(a.timeline); n == 0 || a.timeline[n-1].test != test {
		a.timeline = append(a.timeline, testMark{at: at, test: test})
	}
}

// Uses returns a copy of what was recorded so far.
func (a *AuditRecorder) Uses() map[Request]*RequestUse {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[Request]*RequestUse, len(a.uses))
	for k, v := range a.uses {
		out[k] = v.clone()
	}
	return out
}

// clone is a copy of u that shares no map with it.
func (u *RequestUse) clone() *RequestUse {
	c := *u
	c.Names = make(map[string]bool, len(u.Names))
	for n := range u.Names {
		c.Names[n] = true
	}
	return &c
}

// addName notes an object name of an allowed request, up to
// auditNamesPerRequest of them.
func (u *RequestUse) addName(n string) {
	switch {
	case u.Names[n]:
	case len(u.Names) < auditNamesPerRequest:
		u.Names[n] = true
	default:
		u.NamesTruncated = true
	}
}

// Events is how many audit events arrived.
func (a *AuditRecorder) Events() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.events
}

func (a *AuditRecorder) flushed(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.flushes[id]
}

// serve starts the webhook on a free loopback port and writes the API
// server's audit policy and webhook kubeconfig into dir. It returns the
// kube-apiserver flags that use them.
func (a *AuditRecorder) serve(dir string) ([]string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a.ln = ln
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.srv.Serve(ln) }()

	policy := filepath.Join(dir, "audit-policy.yaml")
	// Metadata is enough for verb, resource, namespace, name and the
	// response code; everyone else's requests are not audited at all.
	if err := os.WriteFile(policy, []byte(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    users: ["`+operatorImpersonator+`"]
  - level: None
`), 0o600); err != nil {
		return nil, err
	}
	webhook := filepath.Join(dir, "audit-webhook.kubeconfig")
	if err := os.WriteFile(webhook, []byte(`apiVersion: v1
kind: Config
clusters:
  - name: recorder
    cluster:
      server: http://`+ln.Addr().String()+`/audit
users:
  - name: apiserver
    user: {}
contexts:
  - name: recorder
    context: {cluster: recorder, user: apiserver}
current-context: recorder
`), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-webhook-config-file=" + webhook,
		"--audit-webhook-mode=batch",
		// Short batches keep Flush quick; no throttle, so no event is
		// dropped in a burst.
		"--audit-webhook-batch-max-wait=1s",
		"--audit-webhook-batch-throttle-enable=false",
	}, nil
}

func (a *AuditRecorder) close() {
	if a.srv != nil {
		_ = a.srv.Close()
	}
}

// Flush waits until the recorder holds every audit event of the requests
// the operator made so far: it makes one marked request with the
// operator's kubeconfig and waits for its event, which the API server's
// batches deliver in order.
func (a *AuditRecorder) Flush(ctx context.Context, operatorKubeconfig string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", operatorKubeconfig)
	if err != nil {
		return err
	}
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	id := strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := c.Discovery().RESTClient().Get().AbsPath("/version").Param(auditFlushParam, id).Do(ctx).Error(); err != nil {
		return fmt.Errorf("audit flush request: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return poll(ctx, 100*time.Millisecond, func(context.Context) (bool, error) { return a.flushed(id), nil })
}
