// Package notifytest holds what tests of notifications receive them with:
// an SMTP server that speaks STARTTLS with a certificate of its own
// (github.com/emersion/go-smtp) and keeps every mail, and a webhook
// receiver that checks each post's signature and counts each event id.
package notifytest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Mail is one message the SMTP server took.
type Mail struct {
	From string
	// To are the envelope's recipients.
	To []string
	// TLS says the message came over STARTTLS; User is who logged in.
	TLS  bool
	User string
	// Header is the message's header; Subject decoded.
	Header  mail.Header
	Subject string
	// Text and HTML are the two parts of a multipart/alternative body,
	// decoded.
	Text, HTML string
	Raw        []byte
}

// SMTPServer is an SMTP server on a loopback port that offers STARTTLS
// with a certificate for 127.0.0.1 and localhost, takes PLAIN logins of
// one user (only over TLS), and keeps every message.
type SMTPServer struct {
	Host string
	Port int
	// CAFile is a PEM file of the certificate, for a channel's smtp.ca.
	CAFile string
	// User and Password are the login it takes.
	User, Password string

	srv  *smtp.Server
	mu   sync.Mutex
	cond *sync.Cond
	mail []Mail
}

// StartSMTP starts an SMTP server; dir receives its certificate file.
// Close stops it.
func StartSMTP(dir string) (*SMTPServer, error) {
	certPEM, keyPEM, err := selfSigned()
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	s := &SMTPServer{Host: "127.0.0.1", CAFile: filepath.Join(dir, "smtp-ca.pem"), User: "baton", Password: "smtp-pa55word"}
	s.cond = sync.NewCond(&s.mu)
	if err := os.WriteFile(s.CAFile, certPEM, 0o600); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.Port = ln.Addr().(*net.TCPAddr).Port
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, c: c}, nil
	}))
	s.srv.Domain = "localhost"
	s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.srv.ReadTimeout, s.srv.WriteTimeout = 30*time.Second, 30*time.Second
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server.
func (s *SMTPServer) Close() error { return s.srv.Close() }

// Mails returns every message taken so far.
func (s *SMTPServer) Mails() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mail...)
}

// Await waits up to timeout until ok holds of the messages taken, and
// returns them.
func (s *SMTPServer) Await(timeout time.Duration, ok func([]Mail) bool) ([]Mail, bool) {
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer t.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !ok(s.mail) {
		if time.Now().After(deadline) {
			return append([]Mail(nil), s.mail...), false
		}
		s.cond.Wait()
	}
	return append([]Mail(nil), s.mail...), true
}

type session struct {
	s    *SMTPServer
	c    *smtp.Conn
	from string
	to   []string
	user string
}

func (x *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != x.s.User || password != x.s.Password {
			return errors.New("invalid credentials")
		}
		x.user = username
		return nil
	}), nil
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, tlsOn := x.c.TLSConnectionState()
	m := Mail{From: x.from, To: x.to, TLS: tlsOn, User: x.user, Raw: raw}
	if err := parse(&m); err != nil {
		return err
	}
	x.s.mu.Lock()
	x.s.mail = append(x.s.mail, m)
	x.s.cond.Broadcast()
	x.s.mu.Unlock()
	return nil
}

// parse reads a message's header and its two alternative parts.
func parse(m *Mail) error {
	msg, err := mail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return err
	}
	m.Header = msg.Header
	dec := new(mime.WordDecoder)
	if m.Subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return err
	}
	_, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		return err
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var body io.Reader = p
		if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
			body = quotedprintable.NewReader(p)
		}
		b, err := io.ReadAll(body)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "\r\n", "\n")
		switch typ, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type")); typ {
		case "text/plain":
			m.Text = text
		case "text/html":
			m.HTML = text
		}
	}
}

// selfSigned makes a certificate for 127.0.0.1 and localhost, valid for a
// day, that is its own authority.
func selfSigned() (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "notifytest SMTP"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), nil
}
