package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
)

// --temporal-api-key-file: the key goes to Temporal as the SDK's API-key
// credentials ("authorization: Bearer KEY"), over TLS, and a key rotated
// in the file is sent from the next request on, without a restart.
func TestTemporalAPIKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, caFile := selfSigned(t, dir)
	var mu sync.Mutex
	seen := map[string]string{} // the last authorization by method
	srv := grpc.NewServer(grpc.Creds(credentials.NewServerTLSFromCert(&cert)),
		grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
			method, _ := grpc.MethodFromServerStream(stream)
			md, _ := metadata.FromIncomingContext(stream.Context())
			mu.Lock()
			seen[method] = ""
			if a := md.Get("authorization"); len(a) == 1 {
				seen[method] = a[0]
			}
			mu.Unlock()
			var in emptypb.Empty
			if err := stream.RecvMsg(&in); err != nil {
				return err
			}
			// An empty message decodes as any response.
			return stream.SendMsg(&emptypb.Empty{})
		}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	keyFile := filepath.Join(dir, "temporal.key")
	if err := os.WriteFile(keyFile, []byte("key-one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var cfg serveConfig
	cfg.temporalAddress, cfg.namespace = ln.Addr().String(), "baton.a1b2c"
	cfg.tlsCA, cfg.temporalAPIKeyFile = caFile, keyFile
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cfg.temporalClient(ctx, &observing{health: &health{}}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const getSystemInfo = "/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo"
	last := func(method string) string {
		mu.Lock()
		defer mu.Unlock()
		return seen[method]
	}
	if got := last(getSystemInfo); got != "Bearer key-one" {
		t.Errorf("at connect, authorization %q, want Bearer key-one", got)
	}
	if err := os.WriteFile(keyFile, []byte("key-two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WorkflowService().GetSystemInfo(ctx, &workflowservice.GetSystemInfoRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := last(getSystemInfo); got != "Bearer key-two" {
		t.Errorf("after the rotation, authorization %q, want Bearer key-two", got)
	}

	// An empty or missing key file stops the command before it connects.
	cfg.temporalAPIKeyFile = filepath.Join(dir, "none")
	if _, err := cfg.temporalClient(ctx, &observing{health: &health{}}, log); err == nil {
		t.Error("a missing --temporal-api-key-file was accepted")
	}
}

// selfSigned makes a certificate for 127.0.0.1 and writes it, as a CA
// bundle, into dir.
func selfSigned(t *testing.T, dir string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, file
}
