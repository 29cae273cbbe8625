package interpreter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file checks values against declared fields (spec §2.3): start_run's
// inputs, a submission's output, and the items inside lists. Values are JSON
// decoded with json.Decoder.UseNumber, so a number arrives as its decimal
// text and is never rounded. Issues follow SPEC-DECISIONS §9:
// "<path>: <problem>", every issue at once, in a fixed order.

// CheckValues checks obj, a JSON object, against fields, naming each path
// under prefix ("inputs" or "output"). It returns every issue at once, in a
// deterministic order: the declared fields in declared order, then the
// undeclared keys sorted. A nil obj is an empty object. It returns nil when
// obj is acceptable.
func CheckValues(prefix string, fields Fields, obj map[string]any) []string {
	var issues []string
	for _, f := range fields {
		if f == nil {
			continue
		}
		path := fieldPath(prefix, f.Name)
		v, ok := obj[f.Name]
		if !ok {
			if !f.Optional {
				issues = append(issues, path+": missing")
			}
			continue
		}
		issues = append(issues, CheckValue(path, f, v)...)
	}
	var extra []string
	for k := range obj {
		if fields.Lookup(k) == nil {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		issues = append(issues, fieldPath(prefix, k)+": not declared")
	}
	return issues
}

// CheckValue checks one value against one field; path is the full path used
// in messages, such as "output.lines[2]". null is never a value: a null for
// any field, optional or not, is "expected <type>". It returns nil when v is
// acceptable.
func CheckValue(path string, f *Field, v any) []string {
	if f == nil {
		return []string{path + ": not declared"}
	}
	if !f.Type.Valid() {
		return []string{fmt.Sprintf("%s: field type %q is not one of the eight types", path, f.Type)}
	}
	if !valueHasType(f.Type, v) {
		return []string{fmt.Sprintf("%s: expected %s", path, f.Type)}
	}
	switch f.Type {
	case TypeList:
		if f.Items == nil {
			return nil
		}
		var issues []string
		for i, item := range v.([]any) {
			issues = append(issues, CheckValue(fmt.Sprintf("%s[%d]", path, i), f.Items, item)...)
		}
		return issues
	case TypeObject:
		return nil
	}
	if len(f.OneOf) > 0 && !inOneOf(f.OneOf, v) {
		return []string{fmt.Sprintf("%s: not one of %s", path, oneOfText(f.OneOf))}
	}
	return nil
}

// fieldPath names key under prefix; an empty prefix names the key alone.
func fieldPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// valueHasType reports whether v is a value of type t. Lists must be []any and
// objects map[string]any, as encoding/json decodes them.
func valueHasType(t Type, v any) bool {
	switch t {
	case TypeString:
		_, ok := v.(string)
		return ok
	case TypeNumber:
		_, ok := numberDecimalText(v)
		return ok
	case TypeBoolean:
		_, ok := v.(bool)
		return ok
	case TypeDate:
		s, ok := v.(string)
		return ok && isCalendarDate(s)
	case TypeDatetime:
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, ok = ParseDatetime(s)
		return ok
	case TypeList:
		_, ok := v.([]any)
		return ok
	case TypeObject:
		_, ok := v.(map[string]any)
		return ok
	case TypePerson:
		s, ok := v.(string)
		return ok && IsPerson(s)
	}
	return false
}

var calendarDateRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)

// isCalendarDate reports whether s is YYYY-MM-DD naming a real calendar date.
func isCalendarDate(s string) bool {
	if !calendarDateRE.MatchString(s) {
		return false
	}
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// rfc3339RE is RFC 3339's date-time: full-date "T" partial-time time-offset,
// with "T" and "Z" in either case as RFC 3339 §5.6 permits. The fields' ranges
// are checked by time.Parse.
var rfc3339RE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$`)

// ParseDatetime parses s as an RFC 3339 date-time with an offset ("Z" or
// ±hh:mm), a real calendar date and time, and an optional fraction of a
// second. It reports false for anything else, including a time without an
// offset and a leap second (":60"), which time.Time cannot represent.
func ParseDatetime(s string) (time.Time, bool) {
	if !rfc3339RE.MatchString(s) {
		return time.Time{}, false
	}
	// Offsets beyond ±23:59 are not RFC 3339; time.Parse allows some.
	if n := len(s); s[n-1] != 'Z' && s[n-1] != 'z' {
		hh, _ := strconv.Atoi(s[n-5 : n-3])
		mm, _ := strconv.Atoi(s[n-2:])
		if hh > 23 || mm > 59 {
			return time.Time{}, false
		}
	}
	norm := strings.Map(func(r rune) rune {
		switch r {
		case 't':
			return 'T'
		case 'z':
			return 'Z'
		}
		return r
	}, s)
	t, err := time.Parse(time.RFC3339Nano, norm)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// Person values are email addresses (describe's person format "email"). The
// grammar is the WHATWG "valid e-mail address" tightened to RFC 5321's limits:
// a dot-atom local part of at most 64 characters, a domain of at least two
// dot-separated labels of letters, digits and inner hyphens (each at most 63
// characters, the last not all digits), at most 254 characters in all, ASCII
// only, no spaces, no quoting, no comments.
var (
	personLocalRE     = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$")
	personLabelRE     = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
	personTLDDigitsRE = regexp.MustCompile(`^[0-9]+$`)
)

// IsPerson reports whether s is a person value: an email address such as
// "mira@example.com" (see the grammar above).
func IsPerson(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.IndexByte(s, '@')
	if at < 0 {
		return false
	}
	local, domain := s[:at], s[at+1:]
	if len(local) > 64 || !personLocalRE.MatchString(local) {
		return false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !personLabelRE.MatchString(l) {
			return false
		}
	}
	return !personTLDDigitsRE.MatchString(labels[len(labels)-1])
}

var jsonNumberTextRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// numberDecimalText returns the decimal text of a number value: a json.Number
// that is a valid JSON number, a finite float, or any Go integer.
func numberDecimalText(v any) (string, bool) {
	switch n := v.(type) {
	case json.Number:
		return string(n), jsonNumberTextRE.MatchString(string(n))
	case float64:
		if math.IsNaN(n) || math.IsInf(n, 0) {
			return "", false
		}
		return strconv.FormatFloat(n, 'g', -1, 64), true
	case float32:
		f := float64(n)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", false
		}
		return strconv.FormatFloat(f, 'g', -1, 32), true
	case int, int8, int16, int32, int64:
		return strconv.FormatInt(reflect.ValueOf(n).Int(), 10), true
	case uint, uint8, uint16, uint32, uint64, uintptr:
		return strconv.FormatUint(reflect.ValueOf(n).Uint(), 10), true
	}
	return "", false
}

// exactDecimal is a number in canonical form: digits without leading or
// trailing zeros (empty for zero) times ten to exp. Two numbers are equal
// exactly when their canonical forms are, whatever their size: no float, no
// rounding, and no huge allocation for "1e999999999" (as big.Rat would make).
type exactDecimal struct {
	neg    bool
	digits string
	exp    *big.Int
}

// parseExactDecimal reads the text of a JSON number or of strconv's 'g'
// format.
func parseExactDecimal(s string) (exactDecimal, bool) {
	var d exactDecimal
	if strings.HasPrefix(s, "-") {
		d.neg = true
		s = s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	exp := new(big.Int)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if _, ok := exp.SetString(strings.TrimPrefix(s[i+1:], "+"), 10); !ok {
			return d, false
		}
		s = s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	if intPart == "" && frac == "" {
		return d, false
	}
	for _, part := range []string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return d, false
			}
		}
	}
	digits := intPart + frac
	exp.Sub(exp, big.NewInt(int64(len(frac))))
	digits = strings.TrimLeft(digits, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp.Add(exp, big.NewInt(int64(len(digits)-len(trimmed))))
	d.digits = trimmed
	d.exp = exp
	if d.digits == "" {
		d.neg = false
		d.exp.SetInt64(0)
	}
	return d, true
}

func (d exactDecimal) equal(e exactDecimal) bool {
	return d.neg == e.neg && d.digits == e.digits && d.exp.Cmp(e.exp) == 0
}

// NumbersEqual reports whether a and b are numbers (json.Number, float or
// integer) of exactly the same value: 1, 1.0 and 1e0 are equal; 0.1 and
// 0.10000000000000001 are not.
func NumbersEqual(a, b any) bool {
	as, ok := numberDecimalText(a)
	if !ok {
		return false
	}
	bs, ok := numberDecimalText(b)
	if !ok {
		return false
	}
	ad, ok := parseExactDecimal(as)
	if !ok {
		return false
	}
	bd, ok := parseExactDecimal(bs)
	return ok && ad.equal(bd)
}

// inOneOf reports whether the scalar v equals one of allowed. Strings (string,
// date, datetime and person values) compare exactly, numbers by value.
func inOneOf(allowed []any, v any) bool {
	for _, a := range allowed {
		switch x := v.(type) {
		case string:
			if s, ok := a.(string); ok && s == x {
				return true
			}
		case bool:
			if b, ok := a.(bool); ok && b == x {
				return true
			}
		default:
			if NumbersEqual(a, v) {
				return true
			}
		}
	}
	return false
}

// oneOfText prints one_of values plain, comma-space separated, in declared
// order: "gold, silver", "1, 2.5", "true".
func oneOfText(values []any) string {
	parts := make([]string, len(values))
	for i, v := range values {
		if s, ok := numberDecimalText(v); ok {
			parts[i] = s
			continue
		}
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ", ")
}

// DecodeJSON decodes b as one JSON value, with numbers as json.Number,
// refusing empty input and anything after the value but white space.
func DecodeJSON(b []byte) (any, error) {
	var v any
	if err := DecodeExact(b, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// DecodeExact decodes b, one JSON value, into v with numbers kept exact
// (json.Number in an any), refusing empty input and anything after the
// value but white space. It is how Baton reads every JSON whose numbers
// matter: arguments, run data, results and stored state.
func DecodeExact(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("decode JSON: no value")
		}
		return fmt.Errorf("decode JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("decode JSON: data after the value at offset %d", dec.InputOffset())
	}
	return nil
}

// RunDataSize returns the length in bytes of v's compact JSON encoding, the
// measure of limits.runDataBytes (spec §6 rule 3). Strings are counted as
// UTF-8 without HTML escaping, numbers as written. A value that has no JSON
// form (a channel, a NaN) measures math.MaxInt, so it is over any cap.
func RunDataSize(v any) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return math.MaxInt
	}
	return buf.Len() - 1 // Encode ends with a newline
}
