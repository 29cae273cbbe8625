package oauth

import "net/http"

// Metadata is the server's RFC 8414 authorization server metadata.
type Metadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
}

// The values the server supports, as metadata and registration name them.
const (
	grantAuthorizationCode = "authorization_code"
	grantRefreshToken      = "refresh_token"

	authNone        = "none"
	authSecretPost  = "client_secret_post"
	authSecretBasic = "client_secret_basic"
)

// Metadata returns the server's metadata document, as served at
// [MetadataPath].
func (s *Server) Metadata() Metadata {
	iss := s.opts.Issuer
	return Metadata{
		Issuer:                                     iss,
		AuthorizationEndpoint:                      iss + AuthorizePath,
		TokenEndpoint:                              iss + TokenPath,
		RegistrationEndpoint:                       iss + RegisterPath,
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{grantAuthorizationCode, grantRefreshToken},
		CodeChallengeMethodsSupported:              []string{pkceS256},
		TokenEndpointAuthMethodsSupported:          []string{authNone, authSecretPost, authSecretBasic},
		AuthorizationResponseIssParameterSupported: true,
		ClientIDMetadataDocumentSupported:          true,
	}
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Metadata())
}
