/**
 * A test egress proxy of the kind README "Egress policy" asks a self-hosted operator to bind as
 * `OUTBOUND`: it resolves the request's host (here from a fixed table, as no test reaches DNS),
 * checks every resolved address with Beaver's own address policy (storage/egress.ts), and either
 * refuses with `X-Beaver-Egress: refused` or sends the request on to the address it checked (here to
 * `upstream`, with the checked address passed along) — never resolving the name a second time.
 */
import { checkEgress, egressPolicy } from "../../src/storage/egress.ts";
import { EGRESS_REASON_HEADER, EGRESS_REFUSED_HEADER, type FetchFn } from "../../src/storage/outbound.ts";

export interface ResolvingProxy {
  fetch: FetchFn;
  /** Requests that reached `upstream`, with the address they were sent to. */
  forwarded: { url: string; address: string }[];
  refused: { url: string; reason: string }[];
}

/** `hosts`: name → the addresses a DNS lookup answers (A and AAAA); an unknown name does not resolve. */
export function resolvingProxy(
  hosts: Record<string, string[]>,
  upstream: (request: Request, address: string) => Promise<Response>,
): ResolvingProxy {
  const policy = egressPolicy({ BEAVER_ALLOW_PRIVATE_EGRESS: "false" });
  const proxy: ResolvingProxy = { forwarded: [], refused: [], fetch: async () => new Response(null) };
  const refuse = (url: string, reason: string) => {
    proxy.refused.push({ url, reason });
    return new Response(`refused: ${reason}`, {
      status: 403,
      headers: { [EGRESS_REFUSED_HEADER]: "refused", [EGRESS_REASON_HEADER]: reason },
    });
  };
  proxy.fetch = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    const name = url.hostname.replace(/^\[|\]$/g, "");
    const addresses = hosts[name];
    if (!addresses || addresses.length === 0) return refuse(request.url, `${name} does not resolve`);
    for (const address of addresses) {
      const literal = new URL(url.href);
      literal.hostname = address.includes(":") ? `[${address}]` : address;
      const verdict = checkEgress(literal, policy);
      if (!verdict.allowed) return refuse(request.url, `${name} resolves to ${address}: ${verdict.reason}`);
    }
    proxy.forwarded.push({ url: request.url, address: addresses[0]! });
    return upstream(request, addresses[0]!);
  };
  return proxy;
}
