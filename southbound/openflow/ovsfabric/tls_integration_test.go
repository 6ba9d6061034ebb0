package ovsfabric_test

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/syncbuf"
	"github.com/proflow-sdn/proflow/internal/testpki"

	"github.com/proflow-sdn/proflow"
	"github.com/proflow-sdn/proflow/southbound/openflow"
	"github.com/proflow-sdn/proflow/southbound/openflow/ovsfabric"
)

// helloOver dials the server with conf and reports whether it sends an
// OpenFlow 1.3 hello, or the error that stopped it.
func helloOver(addr string, conf *tls.Config) (bool, error) {
	d := &net.Dialer{Timeout: 3 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", addr, conf)
	if err != nil {
		return false, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 8)
	n, err := c.Read(buf)
	if err != nil {
		return false, err
	}
	return n == 8 && buf[0] == 4 && buf[1] == 0, nil
}

// TestOVSFabricTLS runs the eight OVS bridges against the OpenFlow server
// over TLS with mutual certificate checks: every bridge connects (ssl:
// controller target, switch certificate verified by the server), Place and
// Collect work, and clients without a certificate from the fabric's CA are
// refused.
func TestOVSFabricTLS(t *testing.T) {
	requireFabric(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()

	// PKI: one CA for the controller and the switches, another one for an
	// impostor.
	ca := testpki.New(t, "proflow fabric CA")
	ctrlCert := ca.Server(t, "proflow controller")
	swCert := ca.Client(t, "proflow switch")
	dir := t.TempDir()
	swKey, swCertPath, caPath := ca.WritePEM(t, dir, "switch", swCert)
	otherCA := testpki.New(t, "some other CA")
	impostor := otherCA.Client(t, "proflow switch")

	var logs syncbuf.Buffer
	cfg := openflow.DefaultConfig()
	cfg.Fabric, cfg.Topology, cfg.Flow = openflow.PaperFabric(), topo, fp
	cfg.RequestTimeout = time.Second
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.TLS = &tls.Config{Certificates: []tls.Certificate{ctrlCert}, ClientCAs: ca.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
	srv, addr := serveOpenFlow(t, ctx, cfg)

	f, err := ovsfabric.Up(ctx, ovsfabric.Config{Prefix: testPrefix, RunDir: testRunDir, Controller: "ssl:" + addr, BucketRate: "10mbit",
		SSLPrivateKey: swKey, SSLCertificate: swCertPath, SSLCACert: caPath})
	if err != nil {
		t.Fatalf("fabric up over TLS with every capability present: %v", err)
	}
	t.Cleanup(func() {
		if err := f.Down(context.Background()); err != nil {
			t.Errorf("fabric down: %v", err)
		}
		assertNothingLeft(t)
	})
	vsctl := func(args ...string) string {
		out, err := f.Output(ctx, "ovs-vsctl", append([]string{"--db=unix:" + testRunDir + "/db.sock"}, args...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	t.Logf("fabric up in %v; ssl: %s", time.Since(start).Round(time.Millisecond), strings.Join(strings.Fields(vsctl("get-ssl")), " "))

	// Every bridge connects over TLS (the listener speaks nothing else).
	wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
	err = srv.WaitReady(wctx)
	wcancel()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(testRunDir, "ovs-vswitchd.log"))
		lines := strings.Split(strings.TrimSpace(string(log)), "\n")
		t.Fatalf("bridges not ready over TLS: %v; connected %v\nserver log:\n%s\novs-vswitchd.log (tail):\n%s",
			err, srv.Connected(), logs.String(), strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
	t.Logf("all %d bridges ready over TLS after %v", len(srv.Connected()), time.Since(start).Round(time.Millisecond))
	// OVS's side: eight controllers with the ssl: target, all connected
	// (ovs-vswitchd refreshes is_connected every few seconds).
	want := strings.TrimSpace(strings.Repeat("ssl:"+addr+",true\n", 8))
	var ctrls string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		ctrls = vsctl("--format=csv", "--data=bare", "--no-headings", "--columns=target,is_connected", "list", "controller")
		if ctrls == want || time.Now().After(deadline) {
			break
		}
	}
	if ctrls != want {
		t.Errorf("OVS controllers (target,is_connected):\n%s\nwant 8 times ssl:%s,true", ctrls, addr)
	}

	// Place and Collect over the TLS sessions.
	if err := srv.Place(ctx, fp, 2); err != nil {
		t.Fatalf("Place over TLS: %v", err)
	}
	if got, err := (&bed{f: f}).where(ctx, fp); err != nil || got != 2 {
		t.Errorf("after Place(agg3) over TLS the OVS rules send f_p to %d (%v), want 2", got, err)
	}
	obs := new(proflow.Observation)
	var cerr error
	for range 5 { // rates need two polls of every switch
		if cerr = srv.Collect(ctx, obs); cerr == nil {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if cerr != nil {
		t.Errorf("Collect over TLS: %v", cerr)
	} else if len(obs.Switches) != len(topo.Switches) || len(obs.Leaves) != len(topo.Leaves) || obs.Time.IsZero() {
		t.Errorf("Collect over TLS: %d switches, %d leaves, time %v; want %d, %d and a time",
			len(obs.Switches), len(obs.Leaves), obs.Time, len(topo.Switches), len(topo.Leaves))
	}

	// Clients. A Go client with the switches' certificate gets the hello
	// (the server is reachable and the refusals below are about the
	// certificate); one without a certificate, one whose certificate comes
	// from another CA and a plain TCP client get none.
	if ok, err := helloOver(addr, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1", Certificates: []tls.Certificate{swCert}}); !ok {
		t.Errorf("a client with a certificate of the fabric's CA got no OpenFlow hello: %v", err)
	}
	for name, conf := range map[string]*tls.Config{
		"no certificate": {RootCAs: ca.Pool, ServerName: "127.0.0.1"},
		// GetClientCertificate: crypto/tls would otherwise send no
		// certificate, as this one does not chain to the CAs the server
		// asks for.
		"certificate of other CA": {RootCAs: ca.Pool, ServerName: "127.0.0.1",
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &impostor, nil }},
	} {
		ok, err := helloOver(addr, conf)
		if ok || err == nil {
			t.Errorf("%s: got an OpenFlow hello (%v), want the connection refused", name, ok)
			continue
		}
		t.Logf("%s: refused: %v", name, err)
	}
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte{4, 0, 0, 8, 0, 0, 0, 1}) // an OpenFlow hello in clear
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 8)
	if n, _ := c.Read(buf); n == 8 && buf[0] == 4 && buf[1] == 0 {
		t.Error("a plain TCP client got an OpenFlow hello from the TLS server")
	}
	c.Close()
	// The server logs why: a certificate error, not a timeout.
	deadline := time.Now().Add(3 * time.Second)
	for !strings.Contains(logs.String(), "certificate") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	var refusals []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "handshake failed") {
			refusals = append(refusals, l)
		}
	}
	if !strings.Contains(strings.Join(refusals, "\n"), "certificate") {
		t.Errorf("server log has no certificate refusal:\n%s", strings.Join(refusals, "\n"))
	}
	// The fabric is untouched by the impostors.
	if got := srv.Connected(); len(got) != 8 {
		t.Errorf("after the refused clients %d switches are connected (%v), want 8", len(got), got)
	}
	if err := srv.Place(ctx, fp, 0); err != nil {
		t.Errorf("Place after the refused clients: %v", err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("test ran past its 60 s budget")
	}
	t.Logf("TLS test done in %v", time.Since(start).Round(time.Millisecond))
}
