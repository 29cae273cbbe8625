package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/baton-run/baton/gateway/auth"
	"github.com/baton-run/baton/internal/store"
	"github.com/baton-run/baton/interpreter"
)

// The MCP resources: a run's view and a published PROCESS.md, as resource
// templates a client can read and attach. They are read on request only:
// the gateway is stateless (no MCP sessions), so it offers no
// subscriptions; a client that wants fresh state reads again.
const (
	runURIPrefix     = "baton://runs/"
	processURIPrefix = "baton://processes/"
)

// addResources registers the resource templates on the MCP server.
func (g *Gateway) addResources() {
	g.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: runURIPrefix + "{runId}",
		Name:        "run",
		Title:       "A run's view",
		Description: "The run view get_run answers: run data, step states and open work items. Refused and not found exactly as get_run is. Its _meta links the run that started it (parent, parentStep) and the runs its process steps started (children), when there are.",
		MIMEType:    "application/json",
	}, g.readRun)
	g.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: processURIPrefix + "{name}",
		Name:        "process",
		Title:       "A published PROCESS.md",
		Description: "The latest published version of a process: its PROCESS.md, frontmatter and body, as published.",
		MIMEType:    "text/markdown",
	}, g.readProcess)
	g.server.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: processURIPrefix + "{name}@{version}",
		Name:        "process-version",
		Title:       "A published version of a PROCESS.md",
		Description: "One published version of a process (a version number from list_processes or a run): its PROCESS.md as published.",
		MIMEType:    "text/markdown",
	}, g.readProcess)
	g.addInsightsResource()
}

// identityOf is the identity a request's bearer token carries, or nil.
func identityOf(extra *mcp.RequestExtra) *auth.Identity {
	if extra == nil {
		return nil
	}
	id, _ := auth.FromTokenInfo(extra.TokenInfo)
	return id
}

// readRun answers baton://runs/{runId} through get_run itself, so the same
// identity, organization and rules apply.
func (g *Gateway) readRun(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	runID := strings.TrimPrefix(uri, runURIPrefix)
	args, err := json.Marshal(map[string]string{"runId": runID})
	if err != nil {
		return nil, err
	}
	data, err := g.serve(ctx, g.tools[interpreter.ToolGetRun], identityOf(req.Extra), args)
	if err != nil {
		return nil, g.resourceError(ctx, uri, err)
	}
	b, err := marshal(data)
	if err != nil {
		return nil, err
	}
	contents := &mcp.ResourceContents{URI: uri, MIMEType: "application/json", Text: string(b)}
	if id := identityOf(req.Extra); id != nil {
		parent, step, children, more, err := g.Family(ctx, *id, runID)
		if err != nil {
			return nil, g.resourceError(ctx, uri, err)
		}
		contents.Meta = familyMeta(parent, step, children, more)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{contents}}, nil
}

// familyMeta is a run resource's _meta: links to the run's parent and
// children (baton-subprocess-1), nil for a run with neither.
func familyMeta(parent, step string, children []string, more bool) mcp.Meta {
	meta := mcp.Meta{}
	if parent != "" {
		meta["parent"], meta["parentStep"] = runURIPrefix+parent, step
	}
	if len(children) > 0 {
		uris := make([]string, len(children))
		for i, c := range children {
			uris[i] = runURIPrefix + c
		}
		meta["children"] = uris
		if more {
			meta["moreChildren"] = "list_runs with parent lists them all"
		}
	}
	if len(meta) == 0 {
		return nil
	}
	return meta
}

// readProcess answers baton://processes/{name} and {name}@{version} with
// the PROCESS.md as published, to any identity of the organization (the
// same who as list_processes).
func (g *Gateway) readProcess(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := identityOf(req.Extra)
	if id == nil {
		return nil, g.resourceError(ctx, uri, forbidden("No identity: send a bearer token."))
	}
	name, version := strings.TrimPrefix(uri, processURIPrefix), 0
	if n, v, ok := strings.Cut(name, "@"); ok {
		var err error
		if version, err = strconv.Atoi(v); err != nil || version < 1 {
			return nil, g.resourceError(ctx, uri, invalid(fmt.Sprintf("%s is not a version: write name@N with N a published version number.", interpreter.Quote(v)), "version: not a positive integer"))
		}
		name = n
	}
	pv, err := g.store.GetVersion(ctx, id.OrgOr(g.opts.Org), name, version)
	if errors.Is(err, store.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, g.resourceError(ctx, uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: pv.Source}}}, nil
}

// resourceError turns a refusal into the JSON-RPC error a resource read
// answers: not_found is the protocol's resource-not-found, invalid is
// invalid params, anything else an internal error; each carries the tool
// error as its data.
func (g *Gateway) resourceError(ctx context.Context, uri string, err error) error {
	var e *interpreter.Error
	if !errors.As(err, &e) {
		g.opts.Logger.ErrorContext(ctx, "resource read failed", "uri", uri, "error", err)
		e = interpreter.ErrRetry()
	}
	if e.Code == interpreter.CodeNotFound {
		return mcp.ResourceNotFoundError(uri)
	}
	data, _ := marshal(e)
	code := jsonrpc.CodeInternalError
	if e.Code == interpreter.CodeInvalid {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: int64(code), Message: e.Message, Data: data}
}

// linkOrg is the organization a signed file link names: the link was
// signed for the caller's, so its files are looked up there.
func (g *Gateway) linkOrg(link string) string {
	if u, err := url.Parse(link); err == nil {
		if org := u.Query().Get("org"); org != "" {
			return org
		}
	}
	return g.opts.Org
}

// maxFileLinks bounds the resource links one result carries, and so the
// file lookups it costs.
const maxFileLinks = 64

// fileLinks are the files an accepted result carries in its run data (a
// run view's or a claim's), as resource_link content: the signed URL, the
// file's name and MIME type. Clients that render links show them; the
// structured content is unchanged.
func (g *Gateway) fileLinks(ctx context.Context, envelope []byte) []mcp.Content {
	if !bytes.Contains(envelope, []byte(`"url"`)) {
		return nil // no signed file link in it
	}
	var shape struct {
		Data struct {
			Data struct {
				Steps map[string]struct {
					Evidence []interpreter.Evidence `json:"evidence"`
					History  []struct {
						Evidence []interpreter.Evidence `json:"evidence"`
					} `json:"history"`
				} `json:"steps"`
			} `json:"data"`
		} `json:"data"`
	}
	if err := json.Unmarshal(envelope, &shape); err != nil {
		return nil
	}
	steps := shape.Data.Data.Steps
	var links []mcp.Content
	seen := map[string]bool{}
	add := func(items []interpreter.Evidence) {
		for _, ev := range items {
			if ev.Kind != "file" || ev.URL == "" || seen[ev.Ref] || len(links) == maxFileLinks {
				continue
			}
			seen[ev.Ref] = true
			f, err := g.store.StatFile(ctx, g.linkOrg(ev.URL), ev.Ref)
			if err != nil {
				continue // gone, or the store failed: the URL alone stays in the data
			}
			size := f.Size
			links = append(links, &mcp.ResourceLink{URI: ev.URL, Name: f.Name, MIMEType: f.ContentType, Size: &size,
				Description: "Evidence file " + f.ID + ", sha256 " + f.SHA256})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(steps)) {
		s := steps[id]
		add(s.Evidence)
		for _, h := range s.History {
			add(h.Evidence)
		}
	}
	return links
}
