// Package telemetry is what an operator watches Baton by: Prometheus
// metrics (Metrics), OpenTelemetry traces (Tracing), and logs that carry
// the id of the request they belong to (NewLogger, Requests).
//
// Everything here is optional and nil-safe: a nil *Metrics records
// nothing and a nil *Tracing traces nothing, so the code that records
// calls its hooks without asking whether anyone listens. Only cmd/baton
// decides what is on.
package telemetry
