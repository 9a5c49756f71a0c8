//go:build tools

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// What cert-manager does for OLM v1's standard install, done once when the cache is built: one ECDSA
// P-256 CA and a serving certificate per controller Service, as kubernetes.io/tls Secrets with ca.crt.
const certValidity = 10 * 365 * 24 * time.Hour

type certAuthority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

func newCA() (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("CA key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "catalogbot-olmv1-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	return &certAuthority{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issue returns a serving certificate and key (PEM) for the DNS names.
func (ca *certAuthority) issue(serial int64, dnsNames ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("key for %s: %w", dnsNames[0], err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: dnsNames[0]},
		DNSNames:     dnsNames,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, fmt.Errorf("certificate for %s: %w", dnsNames[0], err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("key for %s: %w", dnsNames[0], err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

// olmv1Secrets are the Secrets the two controllers mount: catalogd's (its catalog server and webhook) and
// operator-controller's (metrics); both carry ca.crt, which operator-controller trusts catalogd with.
func olmv1Secrets(ca *certAuthority, catalogdSecret string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, s := range []struct{ secret, service string }{
		{catalogdSecret, "catalogd-service"},
		{"operator-controller-cert", "operator-controller-service"},
	} {
		svc := s.service + "." + olmv1Namespace + ".svc"
		crt, key, err := ca.issue(int64(i+2), svc, svc+".cluster.local", "localhost")
		if err != nil {
			return nil, err
		}
		out = append(out, obj("v1", "Secret", olmv1Namespace, s.secret, map[string]any{
			"type": "kubernetes.io/tls",
			"data": map[string]any{"tls.crt": b64(crt), "tls.key": b64(key), "ca.crt": b64(ca.certPEM)},
		}))
	}
	return out, nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
