package com.example.edge;

import static org.junit.Assert.assertEquals;

import org.junit.Test;
import org.junit.experimental.runners.Enclosed;
import org.junit.runner.RunWith;

/** Nested classes (Enclosed runner): the same method name in two inner classes. */
@RunWith(Enclosed.class)
public class NestedTest {
    public static class WhenEmpty {
        @Test
        public void size() {
            assertEquals(0, "".length());
        }
    }

    public static class WhenFull {
        @Test
        public void size() {
            assertEquals(1, "ab".length()); // fails
        }
    }
}
