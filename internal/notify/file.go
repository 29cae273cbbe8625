package notify

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/baton-run/baton/interpreter"
)

// Bounds and defaults of the channels file.
const (
	// MaxFileBytes caps the size of a channels file.
	MaxFileBytes = 1 << 20
	// DefaultSMTPPort is an email channel's port when the file names none:
	// the submission port, where STARTTLS is the rule.
	DefaultSMTPPort = 587
)

// The kinds of channel.
const (
	KindWebhook = "webhook"
	KindEmail   = "email"
)

// FormatSlack makes a webhook channel post a Slack message
// (incoming-webhook blocks) instead of the event's JSON.
const FormatSlack = "slack"

// File is one organization's validated channels file: its channels in the
// order written.
type File struct {
	Channels []Channel
}

// Channel is one place an organization's events go.
type Channel struct {
	// ID names the channel in the deliveries log and the run's history:
	// the file's name, or the kind and the channel's place in the file
	// (webhook-1, email-2).
	ID   string
	Kind string
	// Events are the event types the channel takes; nil for every one.
	Events []interpreter.NoticeType

	// A webhook's: where it posts, the secret it signs with (nil for
	// none: only a Slack webhook may have none), and its format ("" for
	// the event's JSON, or FormatSlack).
	URL    Ref
	Secret *Ref
	Format string

	// An email channel's: the SMTP server, the sender, the address of
	// each group, and the run inputs its mails may show.
	SMTP          *SMTP
	From          string
	Groups        map[string]string
	IncludeInputs []string
}

// SMTP is an email channel's server. Baton always speaks STARTTLS to it
// and authenticates with Username and Password when Username is set.
type SMTP struct {
	Host     string
	Port     int
	Username string
	Password *Ref
	// CA is a PEM file of the certificates that may sign the server's,
	// instead of the system's; "" for the system's.
	CA string
}

// Takes reports whether the channel takes events of type t: those its
// file names, else every one for a webhook and all but a call's for an
// email channel (emailEvents).
func (c *Channel) Takes(t interpreter.NoticeType) bool {
	events := c.Events
	if events == nil {
		if c.Kind != KindEmail {
			return true
		}
		events = emailEvents
	}
	for _, e := range events {
		if e == t {
			return true
		}
	}
	return false
}

// AllTypes are every event type, in the order the docs list them.
func AllTypes() []interpreter.NoticeType { return interpreter.NoticeTypes }

// Channel returns the channel with id, or nil.
func (f *File) Channel(id string) *Channel {
	if f == nil {
		return nil
	}
	for i := range f.Channels {
		if f.Channels[i].ID == id {
			return &f.Channels[i]
		}
	}
	return nil
}

// Ref is a value written in the file (Value) or a reference to a secret:
// the environment variable Env or the contents of the file File (an
// absolute path once parsed). The secret is read where it is used, at
// each use, so a rotated secret needs no restart; it never appears in a
// log, an error or a run's history.
type Ref struct {
	Value string
	Env   string
	File  string
}

// ErrSecret is wrapped by the error of a reference that cannot be read.
var ErrSecret = errors.New("a secret cannot be read")

// Secret reports whether the value is a reference rather than written in
// the file.
func (r Ref) Secret() bool { return r.Env != "" || r.File != "" }

// String names the reference without its value: "env BATON_HOOK_SECRET",
// "file /etc/baton/smtp.pw"; a written value is itself.
func (r Ref) String() string {
	switch {
	case r.Env != "":
		return "env " + r.Env
	case r.File != "":
		return "file " + r.File
	}
	return r.Value
}

// Resolve returns the value: as written, or read from the environment or
// the file (its trailing line break dropped).
func (r Ref) Resolve() (string, error) {
	switch {
	case r.Env != "":
		v, ok := os.LookupEnv(r.Env)
		if !ok || v == "" {
			return "", fmt.Errorf("%w: the environment variable %s is not set where deliveries are made", ErrSecret, r.Env)
		}
		return v, nil
	case r.File != "":
		b, err := os.ReadFile(r.File)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrSecret, err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return "", fmt.Errorf("%w: the file %s is empty", ErrSecret, r.File)
		}
		if strings.ContainsAny(v, "\r\n") {
			return "", fmt.Errorf("%w: the file %s holds more than one line", ErrSecret, r.File)
		}
		return v, nil
	}
	return r.Value, nil
}
