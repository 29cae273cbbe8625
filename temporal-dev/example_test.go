package temporaldev_test

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	temporaldev "github.com/baton-run/baton/temporal-dev"
)

// A server in memory, on a free port, without UI: what a test needs.
// `baton dev` passes a DatabaseFile, FrontendPort 7233 and UIPort 8233.
func ExampleStart() {
	ctx := context.Background()
	s, err := temporaldev.Start(ctx, nil)
	if err != nil {
		fmt.Println("start:", err)
		return
	}
	defer s.Stop()

	c, err := s.NewClient(ctx, client.Options{})
	if err != nil {
		fmt.Println("dial:", err)
		return
	}
	defer c.Close()
	fmt.Println("namespace:", s.Namespace())
	fmt.Println("UI:", s.UIAddress() != "")
	// Output:
	// namespace: default
	// UI: false
}
