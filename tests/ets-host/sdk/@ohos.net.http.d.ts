/* Stand-in for the SDK's api/@ohos.net.http.d.ts (subset, SDK signatures). */
import { AsyncCallback } from './@ohos.base';

declare namespace http {
  function createHttp(): HttpRequest;

  export interface HttpRequestOptions {
    method?: RequestMethod;
    extraData?: string | Object | ArrayBuffer;
    expectDataType?: HttpDataType;
    usingCache?: boolean;
    priority?: number;
    header?: Object;
    readTimeout?: number;
    connectTimeout?: number;
  }

  export interface HttpRequest {
    request(url: string, callback: AsyncCallback<HttpResponse>): void;
    request(url: string, options: HttpRequestOptions, callback: AsyncCallback<HttpResponse>): void;
    request(url: string, options?: HttpRequestOptions): Promise<HttpResponse>;
    destroy(): void;
  }

  export enum RequestMethod {
    OPTIONS = 'OPTIONS',
    GET = 'GET',
    HEAD = 'HEAD',
    POST = 'POST',
    PUT = 'PUT',
    DELETE = 'DELETE',
    TRACE = 'TRACE',
    CONNECT = 'CONNECT'
  }

  export enum ResponseCode {
    OK = 200,
    CREATED = 201,
    ACCEPTED = 202,
    NOT_AUTHORITATIVE = 203,
    NO_CONTENT = 204,
    BAD_REQUEST = 400,
    UNAUTHORIZED = 401,
    FORBIDDEN = 403,
    NOT_FOUND = 404,
    CLIENT_TIMEOUT = 408,
    ENTITY_TOO_LARGE = 413,
    INTERNAL_ERROR = 500,
    UNAVAILABLE = 503
  }

  export enum HttpDataType {
    STRING = 0,
    OBJECT = 1,
    ARRAY_BUFFER = 2
  }

  export interface HttpResponse {
    result: string | Object | ArrayBuffer;
    resultType: HttpDataType;
    responseCode: ResponseCode | number;
    header: Object;
    cookies: string;
    performanceTiming: PerformanceTiming;
  }
  /** ms from the request's start to the end of each step. */
  export interface PerformanceTiming {
    dnsTiming: number;
    tcpTiming: number;
    tlsTiming: number;
    firstSendTiming: number;
    firstReceiveTiming: number;
    totalFinishTiming: number;
    redirectTiming: number;
    responseHeaderTiming: number;
    responseBodyTiming: number;
    totalTiming: number;
  }
}

export default http;
