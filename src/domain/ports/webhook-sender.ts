export interface WebhookRequest {
  url: string;
  /** The event's id, sent as webhook-id. */
  eventId: string;
  /** This attempt's time, sent as webhook-timestamp. */
  timestamp: Date;
  /** The exact JSON body to send. */
  body: string;
  /** One or two `whsec_…` secrets, current first: one signature each. */
  secrets: string[];
}

export interface WebhookResponse {
  /** The status the endpoint answered with; null when no answer came. */
  statusCode: number | null;
  /** Milliseconds from sending until the answer's headers, or until giving up. */
  latencyMs: number;
  /** Null on a 2xx; else what went wrong, naming the host at most, never the URL's path or a secret. */
  error: string | null;
  /** The start of the answer's body; null when it was empty or no answer came. */
  excerpt: string | null;
}

export interface WebhookSender {
  /** Sends one request; never throws. */
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
