package images

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"syscall"

	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/registry"
)

// kind is what a failed registry request means for the catalog.
type kind int

const (
	kindOK              kind = iota
	kindMissing              // the manifest or repository does not exist
	kindUnauthorized         // the registry refused our credentials (or lack of them)
	kindBadReference         // the registry rejected the name or tag as invalid
	kindPlatformMissing      // the image exists but lacks a required platform
	kindUnavailable          // 5xx after retries, 429, connection, DNS, TLS, timeout
	kindUnknown              // not classified: cannot tell whose fault (infrastructure)
)

// classify maps a registry error to a kind and a short, stable reason for messages. It looks only at
// registry error codes, HTTP status codes and typed network errors, never at message text.
func classify(err error) (kind, string) {
	var terr *transport.Error
	if errors.As(err, &terr) {
		return classifyTransport(terr)
	}
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	var recordErr tls.RecordHeaderError
	var alertErr tls.AlertError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return kindUnavailable, "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return kindUnavailable, "connection reset"
	case errors.As(err, &dnsErr):
		return kindUnavailable, "DNS lookup failed"
	case errors.As(err, &certErr), errors.As(err, &unknownAuthority), errors.As(err, &hostnameErr),
		errors.As(err, &invalidCert), errors.As(err, &recordErr), errors.As(err, &alertErr):
		return kindUnavailable, "TLS handshake failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return kindUnavailable, "timed out"
	case errors.Is(err, registry.ErrPlainHTTP):
		return kindUnavailable, "plain HTTP refused (TLS required for non-loopback registries)"
	}
	return kindUnknown, ""
}

func classifyTransport(e *transport.Error) (kind, string) {
	for _, d := range e.Errors {
		switch d.Code {
		case transport.ManifestUnknownErrorCode:
			return kindMissing, "manifest unknown"
		case transport.NameUnknownErrorCode:
			return kindMissing, "repository unknown"
		case transport.UnauthorizedErrorCode, transport.DeniedErrorCode:
			return kindUnauthorized, string(d.Code)
		case transport.NameInvalidErrorCode, transport.TagInvalidErrorCode:
			return kindBadReference, string(d.Code)
		case transport.TooManyRequestsErrorCode:
			return kindUnavailable, "rate limited (TOOMANYREQUESTS)"
		case transport.UnavailableErrorCode:
			return kindUnavailable, "UNAVAILABLE"
		}
	}
	status := fmt.Sprintf("HTTP %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	switch {
	case e.StatusCode == http.StatusNotFound:
		return kindMissing, status
	case e.StatusCode == http.StatusUnauthorized, e.StatusCode == http.StatusForbidden:
		return kindUnauthorized, status
	case e.StatusCode == http.StatusTooManyRequests:
		return kindUnavailable, "rate limited (" + status + ")"
	case e.StatusCode == http.StatusRequestTimeout, e.StatusCode >= 500:
		return kindUnavailable, status
	}
	return kindUnknown, status
}
