package com.example.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.stream.Stream;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OutcomesTest {
    @Test
    void passes() {}

    @Test
    void fails() {
        assertEquals("expected <b>4</b> | `x`", "got <script>alert(1)</script> ]]> end");
    }

    @Test
    void errors() {
        throw new IllegalStateException("not an assertion");
    }

    @Test
    @Disabled("disabled with a reason")
    void disabled() {}

    @Test
    void assumptionFails() {
        assumeTrue(false, "needs a GPU");
    }

    @Test
    @DisplayName("names: ünïcödé ✓ 日本語 | pipe `backtick` <script>alert(1)</script>")
    void displayName() {}

    @ParameterizedTest(name = "{index}: {0}")
    @ValueSource(strings = {"a|b", "`tick`", "<script>", "ünï ✓", "a::b", "dup", "dup"})
    void params(String text) {
        assertNotEquals("a::b", text, "the a::b case fails");
    }

    @RepeatedTest(3)
    void repeated() {}

    @TestFactory
    Stream<DynamicTest> dynamic() {
        return Stream.of("same", "same", "other")
                .map(name -> DynamicTest.dynamicTest(name, () -> assertNotEquals("other", name)));
    }

    @Test
    void noisy() {
        for (int i = 0; i < 1000; i++) {
            System.out.println("line " + i + ": " + "x".repeat(60));
        }
        assertEquals(1, 2, "fails so that Surefire keeps the output");
    }

    @Nested
    class WhenEmpty {
        @Test
        void size() {
            assertEquals(0, "".length());
        }
    }

    @Nested
    class WhenFull {
        @Test
        void size() {
            assertEquals(1, "ab".length()); // fails
        }

        @Nested
        class Deeper {
            @Test
            void size() {}
        }
    }
}
