package auth_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/baton-run/baton/gateway/auth"
)

func ExampleDevIssuer() {
	dir, err := os.MkdirTemp("", "baton-dev")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	// `baton dev` and `baton token --data DIR` load the same key.
	issuer, err := auth.LoadOrCreateDevKey(dir)
	if err != nil {
		log.Fatal(err)
	}
	token, err := issuer.Issue(auth.Identity{ID: "Mira@Example.com", Kind: auth.KindPerson, Groups: []string{"g_finance"}}, time.Hour)
	if err != nil {
		log.Fatal(err)
	}

	// The gateway checks it; issuer.Verify is an auth.Verifier.
	var verify auth.Verifier = issuer.Verify
	id, _, err := verify(context.Background(), token)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id.Kind, id.ID, id.Groups)
	// Output: person mira@example.com [g_finance]
}
