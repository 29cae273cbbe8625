// Command crm runs the demo tool server of the refund example: an MCP
// server named crm with get_customer, create_ticket and refund, over
// Streamable HTTP. It logs every call and every effect, and deduplicates
// tickets and refunds by the idempotency key Baton sends.
//
//	go run ./examples/crm
//
// With CRM_TOKEN set it requires "Authorization: Bearer $CRM_TOKEN", as
// examples/tools.yaml tells Baton to send.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/baton-run/baton/internal/testing/crmtest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8091", "address to listen on")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	token := os.Getenv("CRM_TOKEN")
	crm, err := crmtest.Start(&crmtest.Options{Addr: *listen, Token: token, Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "crm:", err)
		os.Exit(1)
	}
	defer crm.Close()
	fmt.Printf("crm: MCP at %s\n", crm.URL())
	if token == "" {
		fmt.Println("crm: no CRM_TOKEN set, so no credentials are required; examples/tools.yaml sends $CRM_TOKEN, so set it on both sides")
	}
	fmt.Println("crm: customers alice@example.com, bob@example.com, carol@example.com; Ctrl-C stops it")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
}
