/* Stand-in for the SDK's api/@ohos.net.connection.d.ts (subset, SDK signatures). */
import { AsyncCallback, Callback } from './@ohos.base';

declare namespace connection {
  function createNetConnection(netSpecifier?: NetSpecifier, timeout?: number): NetConnection;

  /** @permission ohos.permission.GET_NETWORK_INFO @throws { BusinessError } 201, 2100002, 2100003 */
  function getDefaultNetSync(): NetHandle;

  /** @permission ohos.permission.GET_NETWORK_INFO @throws { BusinessError } 201, 401, 2100001..3 */
  function getNetCapabilitiesSync(netHandle: NetHandle): NetCapabilities;

  export interface NetConnection {
    on(type: 'netAvailable', callback: Callback<NetHandle>): void;
    on(type: 'netBlockStatusChange', callback: Callback<NetBlockStatusInfo>): void;
    on(type: 'netCapabilitiesChange', callback: Callback<NetCapabilityInfo>): void;
    on(type: 'netLost', callback: Callback<NetHandle>): void;
    on(type: 'netUnavailable', callback: Callback<void>): void;
    /** @permission ohos.permission.GET_NETWORK_INFO @throws { BusinessError } 201, 401, 2100002, 2100003, 2101008, 2101022 */
    register(callback: AsyncCallback<void>): void;
    /** @throws { BusinessError } 401, 2100002, 2100003, 2101007 */
    unregister(callback: AsyncCallback<void>): void;
  }

  export interface NetSpecifier {
    netCapabilities: NetCapabilities;
    bearerPrivateIdentifier?: string;
  }

  export interface NetCapabilityInfo {
    netHandle: NetHandle;
    netCap: NetCapabilities;
  }

  export interface NetBlockStatusInfo {
    netHandle: NetHandle;
    blocked: boolean;
  }

  export interface NetHandle {
    netId: number;
  }

  export interface NetCapabilities {
    linkUpBandwidthKbps?: number;
    linkDownBandwidthKbps?: number;
    networkCap?: Array<NetCap>;
    bearerTypes: Array<NetBearType>;
  }

  export enum NetCap {
    NET_CAPABILITY_MMS = 0,
    NET_CAPABILITY_NOT_METERED = 11,
    NET_CAPABILITY_INTERNET = 12,
    NET_CAPABILITY_NOT_VPN = 15,
    NET_CAPABILITY_VALIDATED = 16,
    NET_CAPABILITY_PORTAL = 17,
    NET_CAPABILITY_CHECKING_CONNECTIVITY = 31
  }

  export enum NetBearType {
    BEARER_CELLULAR = 0,
    BEARER_WIFI = 1,
    BEARER_BLUETOOTH = 2,
    BEARER_ETHERNET = 3,
    BEARER_VPN = 4
  }
}

export default connection;
