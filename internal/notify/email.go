package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"html/template"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/baton-run/baton/interpreter"
)

// EmailTimeout bounds one email's delivery to the SMTP server, from the
// connection to QUIT.
const EmailTimeout = 30 * time.Second

// emailEvents are the events an email channel takes when its file names
// none: a call's events are left out, as the same item's work.opened and
// work.decided tell of it.
var emailEvents = []interpreter.NoticeType{
	interpreter.NoticeWorkOpened, interpreter.NoticeWorkOverdue, interpreter.NoticeWorkDecided, interpreter.NoticeRunEnded,
}

// Recipients are the addresses an email channel mails a notice to, sorted:
//
//   - work.opened, call.awaiting_approval: who the item is for (a person
//     at their address, a group at the address the channel maps it to),
//     every approver group of a call;
//   - work.overdue: the same, and the run's operators group;
//   - work.decided, call.decided: who the item was for, but not the
//     person who decided it;
//   - run.ended: the person who started the run (an agent gets no mail).
//
// A group the channel maps to no address gets no mail: Baton has no
// directory of a group's members.
func Recipients(c *Channel, n *interpreter.Notice) []string {
	var out []string
	add := func(addr string) {
		addr = strings.ToLower(strings.TrimSpace(addr))
		if addr != "" && strings.Contains(addr, "@") && !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	group := func(g string) {
		if g != "" {
			add(c.Groups[g])
		}
	}
	item := func(w *interpreter.NoticeItem) {
		add(w.AssignedTo.Person)
		group(w.AssignedTo.Group)
		for _, g := range w.AlsoGroups {
			group(g)
		}
	}
	w := n.WorkItem
	switch n.Type {
	case interpreter.NoticeWorkOpened, interpreter.NoticeCallAwaitingApproval:
		if w != nil {
			item(w)
		}
	case interpreter.NoticeWorkOverdue:
		if w != nil {
			item(w)
		}
		group(n.Operators)
	case interpreter.NoticeWorkDecided, interpreter.NoticeCallDecided:
		if w != nil {
			item(w)
			out = slices.DeleteFunc(out, func(a string) bool { return strings.EqualFold(a, w.DecidedBy) })
		}
	case interpreter.NoticeRunEnded:
		if k := n.Run.StartedBy.Kind; k == interpreter.ActorPerson || k == interpreter.ActorOperator {
			add(n.Run.StartedBy.ID)
		}
	}
	sort.Strings(out)
	return out
}

// Email is one mail as an email channel sends it.
type Email struct {
	From    string
	To      []string
	Subject string
	// Text and HTML are the two forms of the body.
	Text, HTML string
	// MessageID makes a retried delivery the same message.
	MessageID string
}

// mailLine is one labelled line of a mail's body.
type mailLine struct{ Label, Value string }

var mailHTML = template.Must(template.New("mail").Parse(`<!DOCTYPE html>
<html><body style="font-family: sans-serif">
<p><strong>{{.Headline}}</strong></p>
<p>{{.Title}}</p>
<table>{{range .Lines}}<tr><td style="color: #555; padding-right: 1em">{{.Label}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
{{if .Link}}<p><a href="{{.Link}}">Open it in the inbox</a></p>{{end}}
<p style="color: #555; font-size: small">{{.Why}}</p>
</body></html>
`))

// NewEmail is the mail of an event for an email channel: the headline as
// subject; the item's title, the process, run, step, who it is for, its
// due, and the inputs the channel names in the body, with the inbox link.
// No other run data.
func NewEmail(c *Channel, ev Event, to []string, inputs map[string]any) Email {
	h := headline(ev)
	title := ""
	if ev.WorkItem != nil {
		title = ev.WorkItem.Title
	}
	subject := h
	if title != "" {
		subject += ": " + title
	}
	subject += " (" + ev.Run.Process + ")"
	lines := []mailLine{{"Process", ev.Run.Process + " v" + itoa(ev.Run.Version)}, {"Run", ev.Run.ID}}
	if w := ev.WorkItem; w != nil {
		lines = append(lines, mailLine{"Step", w.StepID}, mailLine{"For", assigneeText(w.AssignedTo)})
		if w.Due != nil {
			lines = append(lines, mailLine{"Due", *w.Due})
		}
		if w.Tool != "" {
			lines = append(lines, mailLine{"Tool", w.Tool})
		}
		if w.Decision != "" {
			lines = append(lines, mailLine{"Decision", w.Decision + " by " + w.DecidedBy})
		}
	}
	if s := ev.Step; s != nil {
		lines = append(lines, mailLine{"Step", s.ID}, mailLine{"Due", s.Due})
	}
	if ev.Run.Outcome != "" {
		lines = append(lines, mailLine{"Outcome", ev.Run.Outcome})
	}
	for _, name := range c.IncludeInputs {
		if v, ok := inputs[name]; ok {
			lines = append(lines, mailLine{name, inputText(v)})
		}
	}
	why := "You get this mail because the " + ev.Org + " organization's Baton notifies you of " + ev.Type + " events."
	var text strings.Builder
	text.WriteString(h + "\n")
	if title != "" {
		text.WriteString(title + "\n")
	}
	text.WriteString("\n")
	for _, l := range lines {
		fmt.Fprintf(&text, "%s: %s\n", l.Label, l.Value)
	}
	if l := ev.link(); l != "" {
		fmt.Fprintf(&text, "\nOpen it in the inbox: %s\n", l)
	}
	text.WriteString("\n" + why + "\n")
	var html bytes.Buffer
	_ = mailHTML.Execute(&html, map[string]any{"Headline": h, "Title": title, "Lines": lines, "Link": template.URL(ev.link()), "Why": why})
	return Email{
		From: c.From, To: to, Subject: subject, Text: text.String(), HTML: html.String(),
		MessageID: "<" + ev.ID + "." + c.ID + "@baton>",
	}
}

// inputText shows an input's value on one line.
func inputText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return "null"
	}
	return strings.TrimSpace(fmt.Sprint(v))
}

// Bytes is the mail as RFC 5322 text: headers, then a multipart/alternative
// body of plain text and HTML, both quoted-printable UTF-8.
func (m Email) Bytes(date time.Time) []byte {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	header := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	header("From", m.From)
	header("To", strings.Join(m.To, ", "))
	header("Subject", mime.QEncoding.Encode("utf-8", m.Subject))
	header("Date", date.UTC().Format(time.RFC1123Z))
	header("Message-ID", m.MessageID)
	header("MIME-Version", "1.0")
	header("Auto-Submitted", "auto-generated")
	header("Content-Type", "multipart/alternative; boundary="+mw.Boundary())
	b.WriteString("\r\n")
	for _, part := range []struct{ typ, body string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		pw, _ := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		qw := quotedprintable.NewWriter(pw)
		_, _ = qw.Write([]byte(strings.ReplaceAll(part.body, "\n", "\r\n")))
		_ = qw.Close()
	}
	_ = mw.Close()
	return b.Bytes()
}

// sendEmail delivers a mail through an email channel's SMTP server:
// STARTTLS always (a server that does not offer it gets nothing), then
// PLAIN authentication when the channel names a username.
func (n *Notifier) sendEmail(ctx context.Context, c *Channel, m Email) error {
	s := c.SMTP
	addr := net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
	ctx, cancel := context.WithTimeout(ctx, EmailTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("email %s: connect to %s: %v", c.ID, addr, err)
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	cl, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		return fmt.Errorf("email %s: %s: %v", c.ID, addr, err)
	}
	defer cl.Close()
	if ok, _ := cl.Extension("STARTTLS"); !ok {
		return permanent(fmt.Errorf("email %s: %s does not offer STARTTLS, and Baton sends no mail in clear text", c.ID, addr))
	}
	tc := &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	if s.CA != "" {
		pem, err := os.ReadFile(s.CA)
		if err != nil {
			return fmt.Errorf("email %s: its ca: %v", c.ID, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return permanent(fmt.Errorf("email %s: its ca %s holds no PEM certificate", c.ID, s.CA))
		}
	}
	if err := cl.StartTLS(tc); err != nil {
		return fmt.Errorf("email %s: STARTTLS with %s: %v", c.ID, addr, err)
	}
	if s.Username != "" {
		pw, err := s.Password.Resolve()
		if err != nil {
			return fmt.Errorf("email %s: its password (%s): %w", c.ID, s.Password, err)
		}
		if err := cl.Auth(smtp.PlainAuth("", s.Username, pw, s.Host)); err != nil {
			return fmt.Errorf("email %s: %s refused the login of %s: %v", c.ID, addr, s.Username, err)
		}
	}
	if err := cl.Mail(m.From); err != nil {
		return fmt.Errorf("email %s: MAIL FROM %s: %v", c.ID, m.From, err)
	}
	for _, to := range m.To {
		if err := cl.Rcpt(to); err != nil {
			return fmt.Errorf("email %s: RCPT TO %s: %v", c.ID, to, err)
		}
	}
	w, err := cl.Data()
	if err != nil {
		return fmt.Errorf("email %s: DATA: %v", c.ID, err)
	}
	if _, err := w.Write(m.Bytes(n.now())); err != nil {
		return fmt.Errorf("email %s: sending the message: %v", c.ID, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("email %s: the server refused the message: %v", c.ID, err)
	}
	_ = cl.Quit()
	return nil
}
