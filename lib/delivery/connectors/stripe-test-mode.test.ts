import { STRIPE_TEST_REF } from "@/lib/contract/wire";
import { isSimulatedDelivery } from "@/lib/runtime/views/effects";
import { isTestModeKey } from "./stripe";

/* A refund made with a Stripe test-mode key moved no real money: it is recorded and shown as such, never as paid. */
describe("Stripe test mode", () => {
  it("is read from the key: secret and restricted test keys, not live ones", () => {
    expect(isTestModeKey("sk_test_51abc")).toBe(true);
    expect(isTestModeKey("rk_test_51abc")).toBe(true);
    expect(isTestModeKey("sk_live_51abc")).toBe(false);
    expect(isTestModeKey("rk_live_51abc")).toBe(false);
  });

  it("makes a delivery a simulated one, like the in-process simulator and the .eml files", () => {
    expect(isSimulatedDelivery(`${STRIPE_TEST_REF}re_123`)).toBe(true);
    expect(isSimulatedDelivery("re_123")).toBe(false);
    expect(isSimulatedDelivery("sim_1")).toBe(true);
    expect(isSimulatedDelivery(null)).toBe(false);
  });
});
