package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestHostAgentFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		want  string
		usage bool
	}{
		{[]string{"hostagent"}, "no -flow", true},
		{[]string{"hostagent", "-flow", "tcp 10.0.0.1:1"}, `-flow "tcp 10.0.0.1:1"`, true},
		{[]string{"hostagent", "-flow", "udp 10.0.0.1:1->10.0.0.2:2"}, "want tcp", true},
		{[]string{"hostagent", "-flow", "tcp 10.0.0.1:1->10.0.0.2:2", "-poll", "0s"}, "poll interval 0s", true},
		{[]string{"hostagent", "-flow", "tcp 10.0.0.1:1->10.0.0.2:2", "-window", "1ms"}, "shorter than the poll interval", true},
		{[]string{"hostagent", "-flow", "tcp 10.0.0.1:1->10.0.0.2:2", "-listen", "bogus"}, `-listen "bogus"`, true},
		{[]string{"hostagent", "-flow", "tcp 10.0.0.1:1->10.0.0.2:2", "-tls-key", "k.pem"}, "-tls-cert", true},
		{[]string{"hostagent", "-flow", "tcp 10.0.0.1:1->10.0.0.2:2", "-netns", "/nonexistent/ns", "-listen", "127.0.0.1:0"}, "/nonexistent/ns", false},
	} {
		e, _, _ := newTestEnv()
		err := e.dispatch(context.Background(), tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, errUsage) != tc.usage {
			t.Errorf("%q: %v, want an error containing %q (usage error: %v)", tc.args, err, tc.want, tc.usage)
		}
	}
	e, _, errb := newTestEnv()
	if err := e.dispatch(context.Background(), []string{"hostagent", "-h"}); exitCode(err) != 0 || !strings.Contains(errb.String(), `(default "127.0.0.1:9102")`) {
		t.Errorf("hostagent -h: %v (exit %d); want exit 0 and a loopback default for -listen:\n%s", err, exitCode(err), errb.String())
	}
}

// TestHostAgentServes runs the command on a loopback connection of the
// test (inet_diag needs no privilege for that) with a token from the
// environment and reads both endpoints.
func TestHostAgentServes(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(make([]byte, 64<<10)); err != nil {
		t.Fatal(err)
	}
	flow := fmt.Sprintf("tcp %s->%s", c.LocalAddr(), c.RemoteAddr())
	t.Setenv(hostagentTokenEnv, "tok3n")
	base := serveAgentCommand(t, "hostagent", "-flow", flow, "-listen", "127.0.0.1:0", "-poll", "5ms")
	checkEndpoints(t, base, []endpointCase{
		{"/v1/flow", "", http.StatusUnauthorized, ""},
		{"/v1/flow", "tok3n", http.StatusOK, `"found":true`},
		{"/metrics", "tok3n", http.StatusOK, `proflow_tcp_srtt_seconds{dport=`},
		{"/metrics", "tok3n", http.StatusOK, `proflow_hostagent_polls_total{result="ok"}`},
	})
}
