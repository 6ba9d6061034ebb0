package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/internal/syncbuf"
)

func TestTCStatErrorsHaveOnePrefix(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"tcstat", "-interfaces", " , "}, "no interfaces", true},
		{[]string{"tcstat", "-interfaces", "no-such-dev0", "-listen", "127.0.0.1:0"}, `interface "no-such-dev0": no such device`, false},
		{[]string{"tcstat", "-interfaces", "lo", "-tls-cert", "c.pem"}, "-tls-cert", true},
		{[]string{"tcstat", "-interfaces", "lo", "-tls-client-ca", "ca.pem"}, "-tls-client-ca", true},
		{[]string{"tcstat", "-interfaces", "lo", "-tls-cert", "/nonexistent/c.pem", "-tls-key", "/nonexistent/k.pem"}, "/nonexistent/c.pem", false},
		{[]string{"tcstat", "-interfaces", "lo", "-cache", "-1s"}, "-cache -1s", true},
		{[]string{"tcstat", "-interfaces", "lo", "-timeout", "0s"}, "-timeout 0s", true},
		// Issue 24: a bad -listen exited 1 where other bad flags exit 2.
		{[]string{"tcstat", "-interfaces", "lo", "-listen", "bogus"}, `-listen "bogus"`, true},
		{[]string{"tcstat", "-interfaces", "lo", "-listen", "127.0.0.1:99999"}, `-listen "127.0.0.1:99999"`, true},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, errUsage) != tc.usage {
			t.Errorf("%q: %v, want an error containing %q (usage error: %v)", tc.args, err, tc.want, tc.usage)
			continue
		}
		if n := strings.Count(err.Error(), "tcstat:"); n != 1 {
			t.Errorf("%q: %q says \"tcstat:\" %d times, want once", tc.args, err, n)
		}
	}
}

func TestTCStatDefaultsToLoopback(t *testing.T) {
	e, _, errb := newTestEnv()
	_ = e.dispatch(context.Background(), []string{"tcstat", "-h"})
	if !strings.Contains(errb.String(), `(default "127.0.0.1:9101")`) {
		t.Errorf("tcstat -h does not show a loopback default for -listen:\n%s", errb.String())
	}
}

func TestTCStatToken(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "token")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := tcstatToken(file); err != nil || tok != "from-file" {
		t.Errorf("token from a file = %q, %v; want from-file", tok, err)
	}
	if _, err := tcstatToken(empty); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty token file: %v, want an error", err)
	}
	// Issue 24: /dev/zero as -token-file ran out of memory.
	if _, err := tcstatToken("/dev/zero"); !errors.Is(err, fileutil.ErrNotRegular) {
		t.Errorf("-token-file /dev/zero: %v, want it refused as not a regular file", err)
	}
	t.Setenv(tcstatTokenEnv, "from-env")
	if tok, err := tcstatToken(""); err != nil || tok != "from-env" {
		t.Errorf("token from the environment = %q, %v; want from-env", tok, err)
	}
	if _, err := tcstatToken(file); !errors.Is(err, errUsage) {
		t.Errorf("token in a file and the environment: %v, want a usage error", err)
	}
	t.Setenv(tcstatTokenEnv, "")
	if _, err := tcstatToken(""); err == nil {
		t.Error("empty token variable: no error")
	}
}

// TestTCStatServes runs the command on loopback's qdisc with a token from
// the environment and reads both endpoints.
func TestTCStatServes(t *testing.T) {
	t.Setenv(tcstatTokenEnv, "tok3n")
	base := serveAgentCommand(t, "tcstat", "-interfaces", "lo", "-listen", "127.0.0.1:0")
	checkEndpoints(t, base, []endpointCase{
		{"/v1/qdisc", "", http.StatusUnauthorized, ""},
		{"/v1/qdisc", "wrong", http.StatusUnauthorized, ""},
		{"/v1/qdisc", "tok3n", http.StatusOK, `"lo"`},
		{"/metrics", "tok3n", http.StatusOK, `node_qdisc_overlimits_total{device="lo"`},
		{"/metrics", "tok3n", http.StatusOK, `proflow_tcstat_polls_total{result="ok"}`},
	})
}

// endpointCase is a GET of path with a bearer token (none when empty)
// and the status and a piece of the body it must answer with.
type endpointCase struct {
	path, token string
	code        int
	body        string
}

func checkEndpoints(t *testing.T, base string, cases []endpointCase) {
	t.Helper()
	for _, tc := range cases {
		req, _ := http.NewRequest(http.MethodGet, base+tc.path, nil)
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || !strings.Contains(string(b), tc.body) {
			t.Errorf("GET %s with token %q: %d, want %d and a body with %q:\n%.400s", tc.path, tc.token, resp.StatusCode, tc.code, tc.body, b)
		}
	}
}

// serveAgentCommand runs an agent command (tcstat, hostagent) until the test
// ends and returns its base URL, which it prints as "on http://ADDR/".
func serveAgentCommand(t *testing.T, args ...string) string {
	t.Helper()
	var errb syncbuf.Buffer
	e := &env{stdout: io.Discard, stderr: &errb}
	e.commands = commands()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.dispatch(ctx, args) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%s after cancel: %v", args[0], err)
		}
		http.DefaultClient.CloseIdleConnections()
	})
	addr := regexp.MustCompile(`on http://(127\.0\.0\.1:\d+)/`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := addr.FindStringSubmatch(errb.String()); m != nil {
			return "http://" + m[1]
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("%s ended early: %v\n%s", args[0], err, errb.String())
		default:
		}
	}
	t.Fatalf("%s did not say where it serves:\n%s", args[0], errb.String())
	return ""
}
