import { defaultFetchText } from '../webhooks/provider.js';

// mailwarden's stand-in for Amazon SNS's signing key: an RSA key with a self-signed certificate (CN
// sns.amazonaws.com, valid until 2126), made once with
//   openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj "/CN=sns.amazonaws.com" -keyout key.pem -out cert.pem
// The private key is public: it ships in this package. So a service trusts the certificate only in tests
// (`fetchTestSnsCertificate`) or when told to loudly (`fetchSnsCertificateTrustingTestSigner`, the
// service's `unsafeTrustTestSnsCertificate`); see docs/decisions.md, "Testing SES webhooks".

const privateKey = `-----BEGIN PRIVATE KEY-----
MIIEvgIBADANBgkqhkiG9w0BAQEFAASCBKgwggSkAgEAAoIBAQC30gCKVNz+553+
/Tz+H40MYDrjP1ENr3Hxzh163N20hpxUwjUvqwOi4vnCwKm7bAe2yDkseLOYpIFn
J/BFhRHIAz5e3SbzR2emnEeRVzzHwNCYscqlcyxH2AX9sByl+prnvp6lBenvOLdT
UwoYUQX2HX9p6U63AUifuymHPYdkQhNU1k/Up/qF8asXW268DsBE3n+C8GPmMy/H
t2CJu8TujndKNqT5215gzwT+luYXddBWo0+lYlAdATaVZm0iP3PAGQn6KNM3mXE3
s5SHmvHSWXMQaILLmPAU1nVr7G1DabRrwiYROve0/1dMw/rB0mexJjc2L0X6t3cs
g48JSMRPAgMBAAECggEAMguUBxVMp3+CleH3IY6QdZ6bWbQqyomKAZWmlAUevR/q
3u6S0VwDXOzjp8CRVUv3m61OV4uzBas/6chHU34DlctAR055ZMF7eDJTD8BK9W1K
vU+mRr4g/5xSITu5yPx+APr2MSJ3iqAL1T0l4fHpKBTm0/xnaE6KqaYoi7/WJRab
sZbmhcRrPutmYspjnnNG6j9CAIAv+2ewTq5XR2YF+56F07+FWzjKEm5Luu4Xquwy
zOAeWsAbyiVfg12w4Mip4qxFDCA5ipJy0fcHpba6sUt9fDX93KX6N9HLHQEs7CYg
n1DbY5jzv0aVG7/DdyrgJnoxmoObDV2f6eRf2CX+PQKBgQDrD719JoSzMcnjqRKU
B92/Z+rdjNLLtoCYlszNq89uizK4AaJY1SawAgkeCykKZ0AKrnbAzNpVpTTg/7PQ
sePZUYGvuPzZLF8jcuB/PWQbVN7iukave7fqrXGsTHTDvFWtji9zXeQljB1LmKMn
gxk9m8EkkN/EGpx1WQbG4hpN/QKBgQDIMca+toDecRQRZ7dvD+O064bLSyjFicyU
Gdt5JvpJAbxx2hbeJmHj64p212VpwKPhfZOi3rkGkQ/wTsCTPDP+aq+4FVI0Nm3U
Af3AdmDe+CZH8SGhdW3s3WzoTbLvEuOp7b5GxSd35t071BUg8Gwyy3aIbG7bMqVJ
cVg2krhnOwKBgQDAK/cjuPjmMz81w4TvxtqQYFnQVRAFAahyl17KirskSeLmMlfS
vjhJzvA7Qq6D1dOyp91oVFHvkQgBJquQY86+XXdj/R2iQzdomMNW4w7TlXg+7kFZ
uBCtaK01SrBvUarOIB9E9y7NT5anths082YQSyUFSvfVsFfXTDhRIoqU1QKBgQCv
0KdOzlEXChApyQCcFURRm5dh6rv/4Ck+2Aabu9OLUm8BPhtfNi46UJ3mCP0Thw9l
9Tc3jorIbZWl4kPWCsVO5rsz2+W53SNPUgBcippAt4ZHIEn81niX0U7YJYTD2b7/
eb/lvzgOYT5iULvNldgwM+gBn9krwKrQeS6Tnv88CQKBgDk6H9AixwhtCX1mp48+
IurjFw/TgWovq9Vwr3rntnO175aIjmAerb623b7yB8698nup/DaCJdYt5OV2bwA0
E+J1dMPgFl3oNsbaW3uS+tgdazeRL7dCDouASA8l9uJ6tGx8kyuMdW9PZJ7iDiI4
uX0k4iVBK9pU7QQcOLbiPk+N
-----END PRIVATE KEY-----
`;

const certificate = `-----BEGIN CERTIFICATE-----
MIIDGzCCAgOgAwIBAgIURh8/r+IajL5q9G9Gpv5oKcUz1WIwDQYJKoZIhvcNAQEL
BQAwHDEaMBgGA1UEAwwRc25zLmFtYXpvbmF3cy5jb20wIBcNMjYxMTIyMDE1NTU5
WhgPMjEyNjEwMjkwMTU1NTlaMBwxGjAYBgNVBAMMEXNucy5hbWF6b25hd3MuY29t
MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAt9IAilTc/ued/v08/h+N
DGA64z9RDa9x8c4detzdtIacVMI1L6sDouL5wsCpu2wHtsg5LHizmKSBZyfwRYUR
yAM+Xt0m80dnppxHkVc8x8DQmLHKpXMsR9gF/bAcpfqa576epQXp7zi3U1MKGFEF
9h1/aelOtwFIn7sphz2HZEITVNZP1Kf6hfGrF1tuvA7ARN5/gvBj5jMvx7dgibvE
7o53Sjak+dteYM8E/pbmF3XQVqNPpWJQHQE2lWZtIj9zwBkJ+ijTN5lxN7OUh5rx
0llzEGiCy5jwFNZ1a+xtQ2m0a8ImETr3tP9XTMP6wdJnsSY3Ni9F+rd3LIOPCUjE
TwIDAQABo1MwUTAdBgNVHQ4EFgQU5ez9zYZ55I8mR/+jgLLNXxfg9dQwHwYDVR0j
BBgwFoAU5ez9zYZ55I8mR/+jgLLNXxfg9dQwDwYDVR0TAQH/BAUwAwEB/zANBgkq
hkiG9w0BAQsFAAOCAQEAN2wk7jFJSHgHLWbxIDqdXv8ZmaiXDBtWdbHoHro1ERxw
HP9RD6s1RikXYjyLYz0c8bEghHB8yZG5nKCgvAPOQ9G1t1E0AKs5zmaV3xvn6Q8W
w5zV5HlVplOpvxpcjIPE02fQInPS2TolRILLPO7DeUFQ0JjfikjHbA6/LpL9ck1/
O1LwhMDDGX6FOsCMkZTyqezNosvbvK+SF3Tc1Wg5l3pdggbxpqasa77VXBdhzpvX
7H7rWwFwWF6nWpj59IPmNlSXrVIVaSGbKxnzA+Ix/TebtZj/uc9/v40ZckHflQ6J
bu7EstK46RSrQMp38IyAsfJNsoeBJ3iLxkhguse71Q==
-----END CERTIFICATE-----
`;

/**
 * The key the testing kit signs SNS messages with, its certificate, and the URL its messages name as
 * `SigningCertURL`: on an SNS host (so the receiver's host check passes) under a name SNS never uses, so
 * trusting it can never stand in for a real SNS certificate.
 */
export const testSnsSigner: { readonly privateKey: string; readonly certificate: string; readonly certificateUrl: string } = Object.freeze({
  privateKey,
  certificate,
  certificateUrl: 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-mailwarden-testing-kit.pem',
});

/**
 * A `fetchCertificate` for tests in one process: the test certificate for its URL, and a refusal (no
 * network) for any other, which mailwarden answers with 503 `verification_unavailable`.
 *
 * @example
 * const mailwarden = createMailwarden({
 *   webhooks: { auth: { acme: { ses: { topicArns: [topicArn] } } }, environment: { fetchCertificate: fetchTestSnsCertificate } },
 * });
 */
export async function fetchTestSnsCertificate(url: string): Promise<string> {
  if (url === testSnsSigner.certificateUrl) return testSnsSigner.certificate;
  throw new Error(`fetchTestSnsCertificate serves only the testing kit's certificate, not ${url}.`);
}

/**
 * A `fetchCertificate` for a running service that must accept the testing kit's SES requests (from
 * `mailwarden webhooks send ses`) as well as SNS's: the test certificate's URL is answered from memory,
 * every other URL is fetched from SNS as mailwarden does by default. **Test and staging only**: anyone
 * can sign with the test key, so with it an SES webhook proves only that its TopicArn is allowlisted.
 *
 * @example
 * createMailwarden({ webhooks: { auth, environment: { fetchCertificate: fetchSnsCertificateTrustingTestSigner } } });
 */
export async function fetchSnsCertificateTrustingTestSigner(url: string): Promise<string> {
  return url === testSnsSigner.certificateUrl ? testSnsSigner.certificate : defaultFetchText(url);
}
