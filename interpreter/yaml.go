package interpreter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// This file turns a PROCESS.md into its two parts: the frontmatter as a
// generic JSON value tree, and the body as written.
//
// yaml.v3 is a YAML 1.1/1.2 hybrid: it reads 017 as octal, 1_000 as an
// integer and 2024-01-01 as a timestamp. The specification asks for the YAML
// 1.2 core schema only, so the frontmatter is decoded into yaml.Node values
// and every plain scalar is resolved here by the core schema's own rules.
//
// Decisions the specification leaves open:
//   - Anchors and aliases are refused. They add nothing a process needs, and
//     refusing them rules out alias bombs and cyclic documents.
//   - Mapping keys are scalars; a key that is not a string (17, true) stands
//     for its JSON text ("17", "true"). Two keys with the same resolved text
//     are duplicates, so 17, 017 and "17" collide as they would in JSON.
//   - .inf and .nan are refused: the frontmatter must be JSON.
//   - Explicit tags !!str, !!int, !!float, !!bool, !!null, !!map and !!seq
//     are honoured, and the non-specific tag ! makes a scalar a string
//     (SPEC-DECISIONS §35); any other tag is refused.

// jsonKind is the JSON type of a tree value.
type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
	// jsonInvalid stands for a value whose problem was already reported;
	// later checks skip it silently.
	jsonInvalid
)

func (k jsonKind) String() string {
	switch k {
	case jsonNull:
		return "null"
	case jsonBool:
		return "boolean"
	case jsonNumber:
		return "number"
	case jsonString:
		return "string"
	case jsonArray:
		return "list"
	case jsonObject:
		return "mapping"
	}
	return "unknown"
}

// fmValue is one node of the frontmatter as JSON: a null, boolean, number
// (text in JSON number syntax, json.Number compatible), string, array or
// object (members in the order written). Line and Col are 1-based positions
// in the whole PROCESS.md.
type fmValue struct {
	kind    jsonKind
	str     string // string value, or the JSON text of a number
	b       bool
	arr     []*fmValue
	members []fmMember
	line    int
	col     int
}

// fmMember is one key of an object.
type fmMember struct {
	key     string
	keyLine int
	keyCol  int
	val     *fmValue
}

// get returns the member value for key, or nil.
func (v *fmValue) get(key string) *fmValue {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	for i := range v.members {
		if v.members[i].key == key {
			return v.members[i].val
		}
	}
	return nil
}

// member returns the member for key, or nil.
func (v *fmValue) member(key string) *fmMember {
	if v == nil || v.kind != jsonObject {
		return nil
	}
	for i := range v.members {
		if v.members[i].key == key {
			return &v.members[i]
		}
	}
	return nil
}

// fmDocument is a PROCESS.md split into its parts.
type fmDocument struct {
	// front is the frontmatter text between the two "---" lines.
	front []byte
	// frontLine is the line of the whole file on which front starts.
	frontLine int
	// body is every byte after the newline ending the closing "---" line.
	body []byte
}

// splitDocument splits src into frontmatter and body (SPEC-DECISIONS §22).
// The first line must be "---"; the frontmatter ends at the next line that
// is exactly "---". A trailing carriage return on either line is allowed.
func splitDocument(src []byte) (fmDocument, *Issue) {
	first, rest, ok := fmCutLine(src)
	if !fmIsFence(first) {
		return fmDocument{}, &Issue{Line: 1, Column: 1, Message: `frontmatter: the file must start with a "---" line`}
	}
	noClose := &Issue{Line: 1, Column: 1, Message: `frontmatter: no closing "---" line`}
	if !ok {
		return fmDocument{}, noClose
	}
	start := len(src) - len(rest)
	off := start
	for {
		l, after, more := fmCutLine(src[off:])
		if fmIsFence(l) {
			return fmDocument{front: src[start:off], frontLine: 2, body: after}, nil
		}
		if !more {
			return fmDocument{}, noClose
		}
		off = len(src) - len(after)
	}
}

// fmCutLine returns the first line of b without its newline, the rest after the
// newline, and whether a newline was found.
func fmCutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func fmIsFence(l []byte) bool {
	l = bytes.TrimSuffix(l, []byte{'\r'})
	return string(l) == "---"
}

// yamlParserErrors are the problems yaml.v3's parser (not its scanner)
// reports.
var yamlParserErrors = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlLineRE finds the line number in a yaml.v3 syntax error.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// YAMLError is a YAML document that could not be read at all.
type YAMLError struct {
	// Line is the 1-based line of the problem in the source, 0 when
	// unknown.
	Line int
	// Message is yaml.v3's text without its "yaml: line N:" prefix.
	Message string
	// Syntax is set when yaml.v3 reported a syntax error, unset for a
	// second document or input yaml.v3 panicked on.
	Syntax bool
}

func (e *YAMLError) Error() string { return e.Message }

// YAMLDocument is one YAML document read by the rules of a process's
// frontmatter: the YAML 1.2 core schema, no anchors or aliases, only the
// core tags and the non-specific tag "!", no duplicate keys (by resolved
// text). Root is the document's top node.
type YAMLDocument struct {
	Root *yaml.Node
	vals map[*yaml.Node]*fmValue
}

// ParseYAML reads exactly one YAML document from src and checks every node
// by the frontmatter's rules. top names the document in issue messages,
// whose paths read top, a.b or a[0]. Issues carry 1-based line:column
// positions in src, in the order found. A nil document with a nil error
// means src holds no document; a *YAMLError means it could not be read.
func ParseYAML(src []byte, top string) (*YAMLDocument, []Issue, *YAMLError) {
	root, yerr := decodeYAML(src)
	if yerr != nil || root == nil {
		return nil, nil, yerr
	}
	var is issueList
	c := fmConverter{issues: &is, src: src, top: top, record: map[*yaml.Node]*fmValue{}}
	c.convert(root)
	return &YAMLDocument{Root: root, vals: c.record}, is.list, nil
}

// Kind names the JSON type n resolves to: "null", "boolean", "number",
// "string", "list" or "mapping"; "" when n was refused (an issue says why)
// or is not part of the document.
func (d *YAMLDocument) Kind(n *yaml.Node) string {
	v := d.vals[n]
	if v == nil || v.kind == jsonInvalid {
		return ""
	}
	return v.kind.String()
}

// String returns n's value when it resolves to a string.
func (d *YAMLDocument) String(n *yaml.Node) (string, bool) {
	v := d.vals[n]
	if v == nil || v.kind != jsonString {
		return "", false
	}
	return v.str, true
}

// parseFrontmatter decodes the frontmatter into a value tree. Issues found
// along the way (duplicate keys, tags, aliases, non-finite numbers) are added
// to is; the tree is still returned, the offending values marked jsonInvalid
// and duplicate keys dropped, so later checks can report more without
// repeating them. A nil tree means the YAML could not be read at all.
func parseFrontmatter(doc fmDocument, is *issueList) *fmValue {
	root, yerr := decodeYAML(doc.front)
	if yerr != nil {
		line := doc.frontLine
		if yerr.Syntax && yerr.Line > 0 {
			line = yerr.Line + doc.frontLine - 1
		}
		is.add(line, 0, "frontmatter: %s", yerr.Message)
		return nil
	}
	if root == nil {
		is.add(doc.frontLine-1, 1, "frontmatter: is empty")
		return nil
	}
	c := fmConverter{issues: is, lineOff: doc.frontLine - 1, src: doc.front, top: "frontmatter"}
	return c.convert(root)
}

// decodeYAML reads exactly one YAML document and returns its top node, nil
// when there is none. yaml.v3 can panic on some malformed input; that is
// reported as an error, never a crash.
func decodeYAML(src []byte) (root *yaml.Node, yerr *YAMLError) {
	defer func() {
		if r := recover(); r != nil {
			root, yerr = nil, &YAMLError{Message: fmt.Sprintf("cannot read the YAML (%v)", r)}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, syntaxError(err)
		}
		return nil, &YAMLError{Line: extra.Line, Message: "more than one YAML document"}
	}
	if n.Kind == 0 || (n.Kind == yaml.DocumentNode && len(n.Content) == 0) {
		return nil, nil
	}
	if n.Kind == yaml.DocumentNode {
		return n.Content[0], nil
	}
	return &n, nil
}

// syntaxError turns a yaml.v3 error into a YAMLError with a 1-based line.
func syntaxError(err error) *YAMLError {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return &YAMLError{Message: strings.TrimPrefix(msg, "yaml: "), Syntax: true}
	}
	line, _ := strconv.Atoi(m[1])
	if yamlParserErrors[m[2]] {
		// yaml.v3 numbers a parser error's line from 0 (the line where
		// the construct began) and a scanner error's from 1.
		line++
	}
	return &YAMLError{Line: line, Message: m[2], Syntax: true}
}

// fmConverter turns yaml.Nodes into values, resolving plain scalars by the
// YAML 1.2 core schema.
type fmConverter struct {
	issues  *issueList
	lineOff int
	// src is the frontmatter's text: yaml.v3 drops the non-specific tag
	// "!", which is seen only there.
	src   []byte
	lines []int // offsets of src's line starts, made on first use
	// top names the document at the head of every path.
	top string
	// record, when set, maps every node converted to its value.
	record map[*yaml.Node]*fmValue
	// stack is the path to the node being converted; it is rendered only
	// for a message.
	stack []fmPathSeg
	// slab hands out values a block at a time.
	slab []fmValue
}

// convert returns the value for n at path; a node that cannot be a value is
// reported and comes back as jsonInvalid.
func (c *fmConverter) convert(n *yaml.Node) *fmValue {
	v := c.node(n)
	if c.record != nil {
		c.record[n] = v
	}
	return v
}

// value returns a new value of the given kind and position.
func (c *fmConverter) value(kind jsonKind, line, col int) *fmValue {
	if len(c.slab) == 0 {
		c.slab = make([]fmValue, 64)
	}
	v := &c.slab[0]
	c.slab = c.slab[1:]
	v.kind, v.line, v.col = kind, line, col
	return v
}

// fmPathSeg is one step of a path: a mapping key, or a list index when
// key is empty and index >= 0.
type fmPathSeg struct {
	key   string
	index int
}

// path renders the current path, c.top at the top.
func (c *fmConverter) path() string {
	if len(c.stack) == 0 {
		return c.top
	}
	var b strings.Builder
	for i, s := range c.stack {
		if s.index >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
	}
	return b.String()
}

func (c *fmConverter) pos(n *yaml.Node) (int, int) {
	return n.Line + c.lineOff, n.Column
}

// invalid returns the stand-in for a node whose problem was reported.
func (c *fmConverter) invalid(n *yaml.Node) *fmValue {
	line, col := c.pos(n)
	return c.value(jsonInvalid, line, col)
}

// node converts n; convert records the result.
func (c *fmConverter) node(n *yaml.Node) *fmValue {
	line, col := c.pos(n)
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		c.issues.add(line, col, "%s: anchors and aliases are not allowed", c.path())
		return c.invalid(n)
	}
	tagged := n.Style&yaml.TaggedStyle != 0
	switch n.Kind {
	case yaml.MappingNode:
		if tagged && n.Tag != "!!map" {
			c.issues.add(line, col, "%s: tag %s cannot be used on a mapping", c.path(), n.Tag)
			return c.invalid(n)
		}
		v := c.value(jsonObject, line, col)
		v.members = make([]fmMember, 0, len(n.Content)/2)
		first := map[string][2]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			kl, kc := c.pos(kn)
			key, ok := c.key(kn)
			if !ok {
				continue
			}
			c.stack = append(c.stack, fmPathSeg{key: key, index: -1})
			if at, dup := first[key]; dup {
				c.issues.add(kl, kc, "%s: duplicate key, first at line %d", c.path(), at[0])
				c.stack = c.stack[:len(c.stack)-1]
				continue
			}
			first[key] = [2]int{kl, kc}
			val := c.convert(vn)
			c.stack = c.stack[:len(c.stack)-1]
			v.members = append(v.members, fmMember{key: key, keyLine: kl, keyCol: kc, val: val})
		}
		return v
	case yaml.SequenceNode:
		if tagged && n.Tag != "!!seq" {
			c.issues.add(line, col, "%s: tag %s cannot be used on a list", c.path(), n.Tag)
			return c.invalid(n)
		}
		v := c.value(jsonArray, line, col)
		v.arr = make([]*fmValue, 0, len(n.Content))
		for i, e := range n.Content {
			c.stack = append(c.stack, fmPathSeg{index: i})
			ev := c.convert(e)
			c.stack = c.stack[:len(c.stack)-1]
			v.arr = append(v.arr, ev)
		}
		return v
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	c.issues.add(line, col, "%s: unexpected YAML node", c.path())
	return c.invalid(n)
}

// scalar resolves one scalar node.
func (c *fmConverter) scalar(n *yaml.Node) *fmValue {
	line, col := c.pos(n)
	v := c.value(jsonNull, line, col)
	tag := ""
	switch {
	case n.Style&yaml.TaggedStyle != 0:
		tag = n.Tag
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		tag = "!!str"
	}
	s := n.Value
	if tag == "" && c.nonSpecific(n) {
		// "! 12": the non-specific tag makes a scalar a string (YAML 1.2
		// §6.9.1; SPEC-DECISIONS §35).
		tag = "!!str"
	}
	switch tag {
	case "":
		return c.plain(v, s)
	case "!!str":
		v.kind, v.str = jsonString, s
		return v
	case "!!null":
		if !isCoreNull(s) {
			c.issues.add(line, col, "%s: %q is not a !!null", c.path(), s)
			return c.invalid(n)
		}
		v.kind = jsonNull
		return v
	case "!!bool":
		b, ok := coreBool(s)
		if !ok {
			c.issues.add(line, col, "%s: %q is not a !!bool", c.path(), s)
			return c.invalid(n)
		}
		v.kind, v.b = jsonBool, b
		return v
	case "!!int":
		num, ok := coreInt(s)
		if !ok {
			c.issues.add(line, col, "%s: %q is not a !!int", c.path(), s)
			return c.invalid(n)
		}
		return c.number(v, num)
	case "!!float":
		if num, ok := coreInt(s); ok {
			return c.number(v, num)
		}
		if isCoreSpecialFloat(s) {
			c.issues.add(line, col, "%s: %s is not a JSON number", c.path(), s)
			return c.invalid(n)
		}
		num, ok := coreFloat(s)
		if !ok {
			c.issues.add(line, col, "%s: %q is not a !!float", c.path(), s)
			return c.invalid(n)
		}
		return c.number(v, num)
	}
	c.issues.add(line, col, "%s: unknown tag %s", c.path(), tag)
	return c.invalid(n)
}

// nonSpecific reports whether the node was written with the non-specific
// tag "!". yaml.v3 reads it but keeps no trace of it on the node, except
// that the node starts where the tag does: a plain scalar cannot begin
// with "!", so one that does in the source carried that tag.
func (c *fmConverter) nonSpecific(n *yaml.Node) bool {
	if c.lines == nil {
		c.lines = []int{0}
		for i, b := range c.src {
			if b == '\n' {
				c.lines = append(c.lines, i+1)
			}
		}
	}
	if n.Line < 1 || n.Line > len(c.lines) || n.Column < 1 {
		return false
	}
	line := c.src[c.lines[n.Line-1]:]
	// yaml.v3 counts columns in characters.
	for col := 1; len(line) > 0; col++ {
		r, size := utf8.DecodeRune(line)
		if col == n.Column {
			return r == '!'
		}
		if r == '\n' {
			break
		}
		line = line[size:]
	}
	return false
}

// plain resolves an untagged plain scalar by the core schema.
func (c *fmConverter) plain(v *fmValue, s string) *fmValue {
	if isCoreNull(s) {
		v.kind = jsonNull
		return v
	}
	if b, ok := coreBool(s); ok {
		v.kind, v.b = jsonBool, b
		return v
	}
	if num, ok := coreInt(s); ok {
		return c.number(v, num)
	}
	if isCoreSpecialFloat(s) {
		c.issues.add(v.line, v.col, "%s: %s is not a JSON number", c.path(), s)
		v.kind = jsonInvalid
		return v
	}
	if num, ok := coreFloat(s); ok {
		return c.number(v, num)
	}
	v.kind, v.str = jsonString, s
	return v
}

// number records a number's JSON text, refusing values a float64 cannot
// hold (the content hash reads every number as a float64).
func (c *fmConverter) number(v *fmValue, num string) *fmValue {
	if _, err := strconv.ParseFloat(num, 64); err != nil {
		c.issues.add(v.line, v.col, "%s: number out of range", c.path())
		v.kind = jsonInvalid
		return v
	}
	v.kind, v.str = jsonNumber, num
	return v
}

// key resolves a mapping key to its JSON member name.
func (c *fmConverter) key(kn *yaml.Node) (string, bool) {
	line, col := c.pos(kn)
	if kn.Kind != yaml.ScalarNode {
		if kn.Kind == yaml.AliasNode || kn.Anchor != "" {
			c.issues.add(line, col, "%s: anchors and aliases are not allowed", c.path())
		} else {
			c.issues.add(line, col, "%s: a key must be a plain value, not a list or mapping", c.path())
		}
		return "", false
	}
	if kn.Anchor != "" {
		c.issues.add(line, col, "%s: anchors and aliases are not allowed", c.path())
		return "", false
	}
	v := c.scalar(kn)
	if c.record != nil {
		c.record[kn] = v
	}
	if v.kind == jsonInvalid {
		return "", false
	}
	switch v.kind {
	case jsonString, jsonNumber:
		return v.str, true
	case jsonBool:
		return strconv.FormatBool(v.b), true
	}
	c.issues.add(line, col, "%s: a key must not be null", c.path())
	return "", false
}

func fmJoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// The YAML 1.2 core schema (YAML 1.2.2 §10.3.2).

func isCoreNull(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

func coreBool(s string) (bool, bool) {
	switch s {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	return false, false
}

func isCoreSpecialFloat(s string) bool {
	switch strings.TrimLeft(s, "+-") {
	case ".inf", ".Inf", ".INF":
		return true
	}
	switch s {
	case ".nan", ".NaN", ".NAN":
		return true
	}
	return false
}

// coreInt matches [-+]?[0-9]+, 0o[0-7]+ and 0x[0-9a-fA-F]+ and returns the
// JSON text of the integer.
func coreInt(s string) (string, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x') {
		digits, base := s[2:], 8
		if s[1] == 'x' {
			base = 16
		}
		for i := 0; i < len(digits); i++ {
			if !fmIsDigitIn(digits[i], base) {
				return "", false
			}
		}
		var n big.Int
		if _, ok := n.SetString(digits, base); !ok {
			return "", false
		}
		return n.String(), true
	}
	t := s
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return "", false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return "", false
		}
	}
	t = strings.TrimLeft(t, "0")
	if t == "" {
		t = "0"
	}
	if neg {
		t = "-" + t
	}
	return t, true
}

func fmIsDigitIn(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '7':
		return true
	case c == '8' || c == '9':
		return base == 16
	case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		return base == 16
	}
	return false
}

// coreFloat matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? and
// returns the JSON text of the number: no leading "+", no leading zeros, a
// digit on both sides of the point or no point at all.
func coreFloat(s string) (string, bool) {
	i := 0
	var out strings.Builder
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		if s[i] == '-' {
			out.WriteByte('-')
		}
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[start:i]
	frac := ""
	hasPoint := false
	if i < len(s) && s[i] == '.' {
		hasPoint = true
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	if intPart == "" && (!hasPoint || frac == "") {
		return "", false
	}
	exp := ""
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		es := i
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		ds := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == ds {
			return "", false
		}
		exp = s[es:i]
	}
	if i != len(s) {
		return "", false
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	out.WriteString(intPart)
	if frac != "" {
		out.WriteByte('.')
		out.WriteString(frac)
	}
	if exp != "" {
		out.WriteByte('e')
		out.WriteString(strings.TrimPrefix(exp, "+"))
	}
	return out.String(), true
}
