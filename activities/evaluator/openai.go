package evaluator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/baton-run/baton/interpreter"
)

// DefaultTimeout is how long OpenAI waits for one answer by default.
const DefaultTimeout = 60 * time.Second

// OpenAIOptions configure an OpenAI evaluator.
type OpenAIOptions struct {
	// APIKey is sent as a bearer token. Default "": none, as local servers
	// such as Ollama need. The caller reads it from a key file.
	APIKey string
	// Timeout bounds one call, request and answer. Default 60s.
	Timeout time.Duration
	// HTTPClient sends the requests. Default: http.DefaultClient.
	HTTPClient *http.Client
}

// OpenAI asks a model behind an OpenAI-compatible chat completions API. It
// requests a JSON reply through response_format json_schema (strict), and
// validates the reply whatever the server did with the schema.
type OpenAI struct {
	client  openai.Client
	model   string
	timeout time.Duration
}

// NewOpenAI returns an evaluator that asks model at baseURL, the API root
// that /chat/completions is under: "https://api.openai.com/v1",
// "http://localhost:11434/v1" for Ollama. Nil options mean defaults.
func NewOpenAI(baseURL, model string, opts *OpenAIOptions) (*OpenAI, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("evaluator: URL %q is not an http or https URL; give the API root, such as http://localhost:11434/v1", baseURL)
	}
	if strings.TrimSpace(model) == "" {
		return nil, errors.New("evaluator: a model name is required, such as gpt-4o-mini or llama3.1")
	}
	var o OpenAIOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout < 0 {
		return nil, fmt.Errorf("evaluator: timeout %v is negative; give a positive duration, or 0 for %v", o.Timeout, DefaultTimeout)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	ro := []option.RequestOption{
		option.WithBaseURL(baseURL),
		// Set even when empty, so that OPENAI_API_KEY in the environment
		// is never sent to a server it was not meant for.
		option.WithAPIKey(o.APIKey),
		// One attempt per call: the run decides about retries.
		option.WithMaxRetries(0),
	}
	if o.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(o.HTTPClient))
	}
	return &OpenAI{client: openai.NewClient(ro...), model: model, timeout: o.Timeout}, nil
}

// Model returns the model the evaluator asks.
func (e *OpenAI) Model() string { return e.model }

// Evaluate asks the model once. It returns an *Error of kind
// KindUnavailable when the server cannot be reached, times out or answers
// 5xx, 429 or 408; KindRejected for any other HTTP error; KindMalformed when
// the reply is not valid answers to r.
func (e *OpenAI) Evaluate(ctx context.Context, r *interpreter.CheckRequest) (*interpreter.CheckAnswers, error) {
	if r == nil || len(r.Questions) == 0 {
		return nil, errors.New("evaluator: a check request with questions is required")
	}
	user, err := userMessage(r)
	if err != nil {
		return nil, err
	}
	params := openai.ChatCompletionNewParams{
		Model: openai.ChatModel(e.model),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(systemPrompt(r)),
			openai.UserMessage(user),
		},
		ResponseFormat: openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &openai.ResponseFormatJSONSchemaParam{
				JSONSchema: openai.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:        "check_answers",
					Description: openai.String("One answer per question, keyed by question id."),
					Strict:      openai.Bool(true),
					Schema:      answerSchema(r),
				},
			},
		},
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	var res *http.Response
	reply, err := e.client.Chat.Completions.New(ctx, params, option.WithResponseInto(&res))
	if err != nil {
		return nil, e.callError(ctx, res, err)
	}
	if len(reply.Choices) == 0 {
		return nil, e.malformed(errors.New("the reply has no choices"))
	}
	c := reply.Choices[0]
	switch {
	case c.Message.Refusal != "":
		return nil, e.malformed(fmt.Errorf("the model refused: %s", excerpt(c.Message.Refusal)))
	case c.FinishReason == "length":
		return nil, e.malformed(errors.New("the reply was cut off at the length limit"))
	}
	model := reply.Model
	if strings.TrimSpace(model) == "" {
		model = e.model
	}
	a, err := parseReply(r, c.Message.Content, model)
	if err != nil {
		return nil, e.malformed(err)
	}
	return a, nil
}

func (e *OpenAI) malformed(err error) error {
	return &Error{Kind: KindMalformed, Model: e.model, Err: err}
}

// callError classifies a failed call by the HTTP status, if any.
func (e *OpenAI) callError(ctx context.Context, res *http.Response, err error) error {
	out := &Error{Kind: KindUnavailable, Model: e.model, Err: err}
	var apiErr *openai.Error
	switch {
	case errors.As(err, &apiErr):
		out.Status = apiErr.StatusCode
	case res != nil:
		out.Status = res.StatusCode
	}
	switch s := out.Status; {
	case s == 0:
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			out.Err = fmt.Errorf("no answer within %v: %w", e.timeout, err)
		}
	case s >= 500 || s == http.StatusTooManyRequests || s == http.StatusRequestTimeout:
	case s >= 400:
		out.Kind = KindRejected
	default:
		// A 2xx whose body is not a chat completion.
		out.Kind = KindMalformed
	}
	return out
}
