package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/proflow-sdn/proflow/internal/fileutil"
	"github.com/proflow-sdn/proflow/telemetry/tcstat"
)

// maxTokenFileBytes bounds -token-file.
const maxTokenFileBytes = 64 << 10

// agentFlags are the serving flags every telemetry agent command has
// (tcstat, hostagent): where it listens, its token and its TLS files.
type agentFlags struct {
	cmd, tokenEnv                        string
	listen                               *string
	tokenFile, certFile, keyFile, caFile *string
}

// addAgentFlags defines the serving flags of cmd, listening on def by
// default, its token in tokenEnv when no -token-file is given.
func (e *env) addAgentFlags(fs flagSet, cmd, def, tokenEnv string) *agentFlags {
	return &agentFlags{cmd: cmd, tokenEnv: tokenEnv,
		listen:    fs.String("listen", def, "address to serve on (a non-loopback address should have a token or client certificates)"),
		tokenFile: fs.String("token-file", "", "file holding the bearer token every request must carry (or set "+tokenEnv+")"),
		certFile:  fs.String("tls-cert", "", "serve HTTPS with this certificate (PEM; needs -tls-key)"),
		keyFile:   fs.String("tls-key", "", "private key of -tls-cert (PEM)"),
		caFile:    fs.String("tls-client-ca", "", "require client certificates signed by a CA in this file (PEM; needs -tls-cert)")}
}

// flagSet is the part of flag.FlagSet that addAgentFlags uses.
type flagSet interface {
	String(name, value, usage string) *string
}

// check validates the flags' combinations and the listen address.
func (a *agentFlags) check(def string) error {
	if (*a.certFile == "") != (*a.keyFile == "") {
		return badFlag(a.cmd, "tls-cert", fmt.Sprintf("%q with -tls-key %q", *a.certFile, *a.keyFile), "both or neither")
	}
	if *a.caFile != "" && *a.certFile == "" {
		return badFlag(a.cmd, "tls-client-ca", *a.caFile, "it only with -tls-cert and -tls-key")
	}
	if _, port, err := net.SplitHostPort(*a.listen); err != nil {
		return badFlag(a.cmd, "listen", fmt.Sprintf("%q", *a.listen), "host:port such as "+def)
	} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return badFlag(a.cmd, "listen", fmt.Sprintf("%q", *a.listen), "a port number 0…65535")
	}
	return nil
}

// token reads the bearer token (agentToken).
func (a *agentFlags) token() (string, error) { return agentToken(a.cmd, a.tokenEnv, *a.tokenFile) }

// listenTLS opens the listener, wrapped for TLS when -tls-cert is set, and
// warns on log when it is reachable beyond loopback without a token or
// client certificates. It returns the URL scheme too.
func (a *agentFlags) listenTLS(ctx context.Context, token string, log *slog.Logger) (net.Listener, string, error) {
	var tlsCfg *tls.Config
	if *a.certFile != "" {
		var err error
		if tlsCfg, err = tcstat.ServerTLSConfig(*a.certFile, *a.keyFile, *a.caFile); err != nil {
			return nil, "", err
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", *a.listen)
	if err != nil {
		return nil, "", fmt.Errorf("%s: -listen %s: %w", a.cmd, *a.listen, err)
	}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	if token == "" && *a.caFile == "" && !isLoopback(ln.Addr()) {
		log.Warn(a.cmd+": serving beyond loopback without a bearer token or client certificates: anyone who reaches the port reads what it serves",
			"addr", ln.Addr().String())
	}
	return ln, scheme, nil
}

// agentToken reads cmd's bearer token from file (surrounding white space
// trimmed) or, without a file, from the environment variable env; ""
// means none.
func agentToken(cmd, env, file string) (string, error) {
	val, inEnv := os.LookupEnv(env)
	if file == "" {
		if inEnv && strings.TrimSpace(val) == "" {
			return "", fmt.Errorf("%s: %s is set but empty, want a token or the variable unset", cmd, env)
		}
		return strings.TrimSpace(val), nil
	}
	if inEnv {
		return "", badFlag(cmd, "token-file", file, fmt.Sprintf("it or %s, not both", env))
	}
	// A regular file of at most 64 KiB: /dev/zero would be read until
	// memory runs out, a FIFO would block.
	b, err := fileutil.ReadFile(file, maxTokenFileBytes)
	if err != nil {
		return "", fmt.Errorf("%s: -token-file: %w", cmd, err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("%s: -token-file %s is empty, want a token", cmd, file)
	}
	return token, nil
}

// isLoopback reports whether addr is a TCP address on a loopback IP.
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
